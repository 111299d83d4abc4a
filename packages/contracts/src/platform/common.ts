// Pieces that several of the platform's contracts use.
import { z } from 'zod';

/** A record's id in a path, query or body. */
export const id = z.string().min(1).max(64);

/** A page of a list, with how many there are in all. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ list: z.array(item), total: z.number() });
export type Page<T> = { list: T[]; total: number };
