// /api/auth/*: signing in to the admin API and the console.
import { z } from 'zod';

export const loginBody = z.strictObject({
  username: z.string().min(1, 'required'),
  password: z.string().min(1, 'required'),
  /** A browser's log-in: the session goes in an httpOnly cookie, not in the answer. */
  cookie: z.boolean().optional(),
});

export type LoginBody = z.input<typeof loginBody>;
