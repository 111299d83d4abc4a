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
