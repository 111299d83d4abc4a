// /api/auth/* (sign in, sign out, who am I) and /api/team/members.
import { z } from 'zod';
import { id } from './common.js';

export const signInBody = z.object({ username: z.string().trim().min(1).max(64), password: z.string().min(1).max(1024) });
export const newMemberBody = z.object({ username: z.string().trim().min(1).max(64), password: z.string().min(1).max(1024) });
export const memberQuery = z.object({ id });

export type SignInBody = z.input<typeof signInBody>;
export type NewMemberBody = z.input<typeof newMemberBody>;

export const publicUserSchema = z.object({
  id: z.string(),
  username: z.string(),
  role: z.enum(['root', 'member']),
  teamId: z.string(),
  createTime: z.string(),
});
export type PublicUser = z.infer<typeof publicUserSchema>;

/** Who is signed in, and the token the page sends back with every change (X-CSRF-Token): GET /api/auth/me. */
export const sessionInfoSchema = z.object({ user: publicUserSchema, csrfToken: z.string() });
export type SessionInfo = z.infer<typeof sessionInfoSchema>;
/** A sign-in (the session itself is the httpOnly cookie): when it ends, epoch milliseconds. */
export const signInAnswerSchema = sessionInfoSchema.extend({ expiresAt: z.number() });
export type SignInAnswer = z.infer<typeof signInAnswerSchema>;
