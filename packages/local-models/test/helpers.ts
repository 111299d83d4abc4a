// Talks to a started local-models server over real HTTP, as the gateway does.
import { afterAll, beforeAll, expect } from 'vitest';
import { formatQuotesForPrompt, startLocalModels, type LocalModels, type QuoteInput } from '@kbchat/local-models';

export async function postJson(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** The data payloads of an SSE body, [DONE] included. */
export function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

export function norm(v: number[]): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

export function dot(a: number[], b: number[]): number {
  return a.reduce((s, x, i) => s + x * b[i], 0);
}

/**
 * A local model server started for the calling test file (warmed up, closed
 * after it) and `answer(quotes, question)`: local-extractive's answer text.
 */
export function extractiveAnswerer(): { server(): LocalModels; answer(quotes: QuoteInput[], question: string): Promise<string> } {
  let lm: LocalModels;
  beforeAll(async () => {
    lm = await startLocalModels({ warmup: true });
  });
  afterAll(async () => {
    await lm?.close();
  });
  return {
    server: () => lm,
    async answer(quotes, question) {
      const r = await postJson(lm.baseUrl, '/chat/completions', {
        model: 'local-extractive',
        messages: [{ role: 'user', content: formatQuotesForPrompt(quotes, question) }],
      });
      expect(r.status, r.text).toBe(200);
      return (r.json as any).choices[0].message.content;
    },
  };
}
