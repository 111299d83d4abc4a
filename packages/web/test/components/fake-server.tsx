// The browser's fetch, driven by the test: every call the app makes is
// recorded and waits until the test answers it (or a route registered with
// `on` answers it at once). Answers are real Response objects, so the app's
// own api.ts reads them exactly as it reads the platform's. This is the
// boundary between the page and the network, not a stand-in for our code.
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { cleanup, render, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, vi } from 'vitest';
import { addMessages } from '../../src/i18n';
import { areas } from '../../src/message-areas';
import { createQueryClient } from '../../src/query';
import { Boundary } from '../../src/ui';

export interface FetchCall {
  method: string;
  /** The path with its query, as the app asked for it. */
  url: string;
  path: string;
  query: URLSearchParams;
  /** The JSON body, parsed; undefined for none. */
  body: any;
  signal: AbortSignal | undefined;
  /** Whether the answer was given (or the call was cancelled). */
  settled: boolean;
  aborted: boolean;
  /** Answers with the platform's envelope around `data` (status 200 unless told). */
  reply(data: unknown, status?: number): void;
  /** Answers with this JSON body as it is. */
  replyJson(body: unknown, status?: number): void;
}

type Route = (call: FetchCall) => { data: unknown; status?: number } | { json: unknown; status?: number } | undefined;

export interface FakeServer {
  calls: FetchCall[];
  /** Answers every call of `method path` at once with what `answer` returns (undefined: leave it waiting). */
  on(method: string, path: string, answer: Route): void;
  /** The calls made to `method path` so far. */
  callsTo(method: string, path: string): FetchCall[];
  /** The next call to `method path` that has not been answered (waits for it to be made). */
  waitFor(method: string, path: string, match?: (call: FetchCall) => boolean): Promise<FetchCall>;
}

export function fakeServer(): FakeServer {
  const calls: FetchCall[] = [];
  const routes: { method: string; path: string; answer: Route }[] = [];
  const fetch = (input: string | URL | Request, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = String(input);
      const parsed = new URL(url, 'http://localhost');
      const answer = (body: unknown, status: number) => {
        if (call.settled) return;
        call.settled = true;
        resolve(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }));
      };
      const call: FetchCall = {
        method: init.method ?? 'GET',
        url,
        path: parsed.pathname,
        query: parsed.searchParams,
        body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
        signal: init.signal ?? undefined,
        settled: false,
        aborted: false,
        reply: (data, status = 200) =>
          answer(status < 400 ? { code: status, statusText: '', message: '', data } : { code: status, statusText: '', message: String(data) }, status),
        replyJson: (body, status = 200) => answer(body, status),
      };
      // As the browser does: a cancelled call rejects with an AbortError and never answers.
      init.signal?.addEventListener('abort', () => {
        if (call.settled) return;
        call.settled = true;
        call.aborted = true;
        reject(new DOMException('The operation was aborted.', 'AbortError'));
      });
      calls.push(call);
      const route = routes.find((r) => r.method === call.method && r.path === call.path);
      const out = route?.answer(call);
      if (out) 'json' in out ? call.replyJson(out.json, out.status) : call.reply(out.data, out.status);
    });
  vi.stubGlobal('fetch', vi.fn(fetch));
  const callsTo = (method: string, path: string) => calls.filter((c) => c.method === method && c.path === path);
  return {
    calls,
    on: (method, path, answer) => routes.unshift({ method, path, answer }),
    callsTo,
    waitFor: (method, path, match = () => true) =>
      waitFor(() => {
        const call = callsTo(method, path).find((c) => !c.settled && match(c));
        if (!call) throw new Error(`no waiting ${method} ${path} yet (calls: ${calls.map((c) => `${c.method} ${c.url}`).join(', ')})`);
        return call;
      }),
  };
}

/** Renders `ui` as an entry does: one fresh QueryClient (the app's own defaults) and a boundary around it. */
export function renderWithQueries(ui: ReactNode): ReturnType<typeof render> & { client: QueryClient } {
  const client = createQueryClient();
  const result = render(
    <QueryClientProvider client={client}>
      <Boundary>{ui}</Boundary>
    </QueryClientProvider>,
  );
  return Object.assign(result, { client });
}

// The components here come from every entry: give them every area's texts, as
// the entries do for their own areas.
addMessages(...areas);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});
