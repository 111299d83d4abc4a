// The gateway's admin API as the console calls it: its session cookie and
// CSRF token (api.ts keeps the token), answers as the API gives them.
import type { GatewayCookieLogin, GatewayMe, LoginBody } from '@kbchat/contracts';
import { apiJson, setCsrfToken, type CallOptions } from '../api';
import type { GatewayUser as PublicUser } from '@kbchat/contracts';

export type { GatewayUser, GatewayToken, GatewayUserPage, GatewayTokenPage, GatewayCreatedToken } from '@kbchat/contracts';

export const gatewayApi = <T>(path: string, init?: CallOptions): Promise<T> => apiJson<T>(path, init);

/** Who the cookie signs in, or an ApiError (401: nobody). */
export async function me(): Promise<PublicUser> {
  // The cookie's session (the console's only way in) always comes with its CSRF token.
  const r = await gatewayApi<GatewayMe & { csrf_token: string }>('/api/auth/me');
  setCsrfToken(r.csrf_token);
  return r.user;
}

/** Signs in with a cookie: the session secret stays in it, never in this page's script. */
export async function signIn(username: string, password: string): Promise<PublicUser> {
  const r = await gatewayApi<GatewayCookieLogin>('/api/auth/login', { json: { username, password, cookie: true } satisfies LoginBody });
  setCsrfToken(r.csrf_token);
  return r.user;
}

export async function signOut(): Promise<void> {
  await gatewayApi('/api/auth/logout', { method: 'POST' }).catch(() => {});
  setCsrfToken('');
}

/** Root and admins see the whole console; a plain user only its own tokens. */
export const isAdmin = (user: PublicUser): boolean => user.role === 'root' || user.role === 'admin';

/** Units as people read them: up to six decimals, no trailing zeros. */
export function formatUnits(units: number): string {
  return Number(units.toFixed(6)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}
