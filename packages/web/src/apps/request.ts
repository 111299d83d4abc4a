// api() returns only an answer's `data`; the application routes also put
// warnings in `message` on success (settings accepted, but not working as
// asked), which the form must show. Same errors as api(): the platform's own
// message in an ApiError.
import { ApiError, csrfHeader } from '../api';

export async function apiWithMessage<T>(path: string, init: { method: string; json: unknown }): Promise<{ data: T; message: string }> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method,
      headers: { 'content-type': 'application/json', ...csrfHeader() },
      credentials: 'same-origin',
      body: JSON.stringify(init.json),
    });
  } catch {
    throw new ApiError(0, '');
  }
  let body: { data?: T; message?: string } | undefined;
  try {
    body = JSON.parse(await res.text());
  } catch {
    body = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, body?.message || `${res.status} ${res.statusText}`);
  return { data: body?.data as T, message: body?.message ?? '' };
}
