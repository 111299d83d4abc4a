// The console's Logs page without a browser: how a replay's answer is read,
// and the filters a page URL carries (the Chromium suite, in packages/e2e,
// runs the page itself against the real gateway).
import { describe, expect, it } from 'vitest';
import { readAnswer } from '../src/console/logs/answer.js';
import { filtersOf, queryOf } from '../src/console/logs/query.js';

describe('the logs page without a browser', () => {
  it('reads a replay answer of every kind: JSON, a stream, a stream that broke, an embedding, an error', () => {
    const base = { request_id: 'r2', original_request_id: 'r1' };
    expect(readAnswer({ ...base, status: 200, stream: false, response: { choices: [{ message: { content: 'hi' } }] } })).toEqual({ ok: true, text: 'hi' });
    const chunk = (content: string) => ({ choices: [{ delta: { content } }] });
    expect(readAnswer({ ...base, status: 200, stream: true, response: [chunk('Echo: '), chunk('a b'), { choices: [], usage: {} }, '[DONE]'] })).toEqual({
      ok: true,
      text: 'Echo: a b',
    });
    const broke = readAnswer({ ...base, status: 200, stream: true, response: [chunk('half'), { error: { message: 'upstream stream broke' } }] });
    expect(broke).toEqual({ ok: false, text: 'upstream stream broke\n\nhalf' });
    expect(readAnswer({ ...base, status: 200, stream: false, response: { data: [{ embedding: [0.1, 0.2, 0.3] }, { embedding: [0, 0, 1] }] } })).toMatchObject({
      ok: true,
      summary: { kind: 'embeddings', count: 2, dims: 3 },
    });
    expect(readAnswer({ ...base, status: 503, stream: false, response: { error: { message: 'overloaded' } } })).toEqual({ ok: false, text: 'overloaded' });
  });

  it('keeps the filters a URL gives when they are what their fields take, and writes them back in one order', () => {
    const f = filtersOf('?status=5xx&user_id=7&token_id=abc&model=a%25b+c&from=2026-01-01T00%3A00%3A00.000Z&to=tomorrow&cursor=1_2');
    expect(f).toEqual({ status: '5xx', user_id: '7', model: 'a%b c', from: '2026-01-01T00:00:00.000Z' });
    expect(queryOf(f, '1_2')).toBe('?from=2026-01-01T00%3A00%3A00.000Z&user_id=7&model=a%25b+c&status=5xx&cursor=1_2');
    expect(filtersOf(queryOf(f))).toEqual(f);
    expect(filtersOf('?status=teapot&channel_id=0')).toEqual({});
  });
});
