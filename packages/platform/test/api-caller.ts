// The platform's API called over HTTP with a bearer key, as the end-to-end
// tests call it: GET without a body, POST with one, unless a method is named.
export interface ApiAnswer {
  status: number;
  body: any;
  requestId: string | null;
}

/** `url` is read on each call (the platform starts in beforeAll, after this is made). */
export function apiCaller(url: () => string, defaultKey: string) {
  return async (path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST', key = defaultKey): Promise<ApiAnswer> => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any, requestId: res.headers.get('x-request-id') };
  };
}
