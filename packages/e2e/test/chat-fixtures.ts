// What the chat browser tests share: the API called as the signed-in page
// calls it, a knowledge base with an application that answers from it, and a
// chat stream held open so that Stop can be pressed.
import type { Page } from 'playwright-core';

export const FACT = 'The lighthouse keeper Marguerite Okonkwo painted the tower teal in 1987.';

export type Call = <T>(path: string, json?: unknown, method?: string) => Promise<T>;

/** Calls the API as the signed-in page does (its cookie, its CSRF token). */
export async function asPage(page: Page, url: string): Promise<Call> {
  const me = await page.request.get(`${url}/api/auth/me`);
  const csrf = ((await me.json()) as { data: { csrfToken: string } }).data.csrfToken;
  return async <T>(path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST'): Promise<T> => {
    const res = await page.request.fetch(`${url}${path}`, {
      method,
      headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' },
      data: json === undefined ? undefined : JSON.stringify(json),
    });
    const body = (await res.json()) as { data: T; message: string };
    if (!res.ok()) throw Object.assign(new Error(`${path}: ${res.status()} ${body.message}`), { status: res.status() });
    return body.data;
  };
}

/** Waits (a minute at most) until the knowledge base has at least `items` items, all indexed. */
export async function untilIndexed(call: Call, datasetId: string, items = 1): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const p = await call<{ done: number; total: number }>(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (p.total >= items && p.done === p.total) return;
    if (Date.now() > until) throw new Error(`not indexed: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** A knowledge base holding FACT, indexed, and an application on local-extractive that answers from it. */
export async function appWithKnowledge(call: Call, name = 'Lighthouse desk'): Promise<{ appId: string; datasetId: string }> {
  const datasetId = await call<string>('/api/core/dataset/create', { name: `${name} notes`, vectorModel: 'local-embed' });
  await call('/api/core/dataset/collection/create/text', {
    datasetId,
    name: 'keeper.md',
    text: `# Lighthouse\n\n${FACT}\n\n# Harbour\n\nThe harbour master rings the bell at noon.`,
  });
  await untilIndexed(call, datasetId);
  const appId = await call<string>('/api/core/app/create', { name, model: 'local-extractive', datasets: [datasetId], systemPrompt: 'You help {{visitor}}.' });
  return { appId, datasetId };
}

/** The first test's application, or a new one when a test runs alone. */
export async function lighthouseApp(call: Call): Promise<string> {
  const apps = await call<{ list: { id: string; name: string }[] }>('/api/core/app/list', {});
  return apps.list.find((a) => a.name === 'Lighthouse desk')?.id ?? (await appWithKnowledge(call)).appId;
}

/**
 * The page's fetch of the chat, replaced by a stream that sends one piece and
 * then stays open until the request is aborted (as a slow model would), so
 * that Stop can be pressed while it runs. Only while window.holdChat is set.
 */
export function holdChatStreams(page: Page) {
  return page.addInitScript(() => {
    const real = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (!(window as unknown as { holdChat?: boolean }).holdChat || !String(input).includes('/api/v1/chat/completions')) return real(input, init);
      const signal = init?.signal;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('event: answer\ndata: {"choices":[{"delta":{"content":"Partial answer"}}]}\n\n'));
          signal?.addEventListener('abort', () => c.error(new DOMException('The user aborted a request.', 'AbortError')));
        },
      });
      return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }));
    };
  });
}
