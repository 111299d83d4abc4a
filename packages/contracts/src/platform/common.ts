// Pieces that several of the platform's contracts use.
import { z } from 'zod';

/** A record's id in a path, query or body. */
export const id = z.string().min(1).max(64);
