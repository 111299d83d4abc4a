// What the translator tests of every wire format do the same way: translate an
// OpenAI body and send it to the simulator, translate the answer back, and
// feed a recorded stream to the stream translator in given pieces.
import { expect } from 'vitest';
import type { ChatCompletionChunk, WireAdapter } from '../src/providers/index.js';

/** The `created` every translated answer is given, so that shapes compare exactly. */
export const CREATED = 1_700_000_000;

/** `wire` and `baseUrl` are read at each call: the tests set them in beforeAll. */
export function wireCalls(wire: () => WireAdapter, baseUrl: () => string, defaultKey: string) {
  const channel = (key = defaultKey, url = baseUrl()) => ({ baseUrl: url, key, options: {} });

  /** Translates and sends an OpenAI chat body; answers the raw response. */
  function send(body: Record<string, unknown>, model: string, key = defaultKey): Promise<Response> {
    const target = wire().chatTarget(model, body.stream === true, channel(key));
    return fetch(target.url, { method: 'POST', headers: target.headers, body: JSON.stringify(wire().chatRequest(body, model)) });
  }

  async function complete(body: Record<string, unknown>, model: string) {
    const res = await send(body, model);
    expect(res.status).toBe(200);
    return wire().chatResponse(await res.json(), { model: 'client-name', created: CREATED });
  }

  /** The translated chunks of a whole byte string fed in the given pieces. */
  function translate(bytes: Uint8Array, cuts: number[]): ChatCompletionChunk[] {
    const s = wire().chatStream({ model: 'client-name', created: CREATED });
    const out: ChatCompletionChunk[] = [];
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      out.push(...s.push(bytes.subarray(at, cut)));
      at = cut;
    }
    out.push(...s.end());
    return out;
  }

  async function recorded(body: Record<string, unknown>, model: string): Promise<Uint8Array> {
    const res = await send({ ...body, stream: true }, model);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    return new Uint8Array(await res.arrayBuffer());
  }

  return { channel, send, complete, translate, recorded };
}
