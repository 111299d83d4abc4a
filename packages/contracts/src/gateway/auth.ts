// /api/auth/*: signing in to the admin API and the console.
import { z } from 'zod';
import { gatewayUserSchema } from './users.js';

export const loginBody = z.strictObject({
  username: z.string().min(1, 'required'),
  password: z.string().min(1, 'required'),
  /** A browser's log-in: the session goes in an httpOnly cookie, not in the answer. */
  cookie: z.boolean().optional(),
});

export type LoginBody = z.input<typeof loginBody>;

/** POST /api/auth/login without `cookie`: the session, for the Authorization header. */
export const gatewaySessionLoginSchema = z.object({
  session: z.string(),
  /** Epoch ms. */
  expires_at: z.number(),
  user: gatewayUserSchema,
});
export type GatewaySessionLogin = z.infer<typeof gatewaySessionLoginSchema>;

/** POST /api/auth/login with `cookie: true`: the session is in the cookie; changes send this CSRF token in X-CSRF-Token. */
export const gatewayCookieLoginSchema = z.object({
  user: gatewayUserSchema,
  csrf_token: z.string(),
  /** Epoch ms. */
  expires_at: z.number(),
});
export type GatewayCookieLogin = z.infer<typeof gatewayCookieLoginSchema>;

export const gatewayLoginAnswerSchema = z.union([gatewaySessionLoginSchema, gatewayCookieLoginSchema]);
export type GatewayLoginAnswer = z.infer<typeof gatewayLoginAnswerSchema>;

/** POST /api/auth/logout. */
export const gatewayLogoutAnswerSchema = z.object({ ok: z.literal(true) });

/** GET /api/auth/me: who the request acts as, and how it came in. */
export const gatewayMeSchema = z.object({
  user: gatewayUserSchema,
  via: z.enum(['session', 'token']),
  /** The session's CSRF token, when it came in the cookie (a browser). */
  csrf_token: z.string().optional(),
});
export type GatewayMe = z.infer<typeof gatewayMeSchema>;
