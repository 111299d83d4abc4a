// The stream relay's block fast path (sse-frames.ts) must send exactly what
// the event-by-event path sends, however the upstream's bytes are split into
// reads, and keep the text it did not parse countable.
import { describe, expect, it } from 'vitest';
import { answerText, pipeChatStream, type StreamOutcome } from '../src/relay/chat-stream.js';
import type { Responder } from '../src/relay/context.js';
import { ChunkDecoder, plainFramesEnd, RawFrames } from '../src/http1/sse-frames.js';

const chunk = (delta: object, usage: object | null = null, choices = true) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: choices ? [{ index: 0, delta, finish_reason: null }] : [],
    usage,
  });

const EVENTS = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hé' }),
  chunk({ content: ' wörld ' }),
  chunk({ content: '"usage":null inside' }),
  // usage:null first: not at the chunk's end, so re-serialised without it.
  '{"id":"c1","usage":null,"choices":[{"index":0,"delta":{"content":" done"}}]}',
  chunk({}, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }, false),
];
const stream = EVENTS.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n';

class Capture implements Responder {
  started = false;
  out = '';
  json(): void {}
  startStream(): void {
    this.started = true;
  }
  write(text: string): void {
    this.out += text;
  }
  end(text?: string): void {
    if (text) this.out += text;
  }
}

/** Relays `bytes` split into reads at `cuts`; returns what the client got. */
async function relay(bytes: Buffer, cuts: number[], clientWantsUsage: boolean): Promise<{ out: string; outcome: StreamOutcome }> {
  const responder = new Capture();
  const outcome = await pipeChatStream(
    async (onChunk) => {
      let at = 0;
      for (const cut of [...cuts, bytes.length]) {
        await onChunk(bytes.subarray(at, cut));
        at = cut;
      }
    },
    {
      responder,
      requestId: 'r',
      startedAt: Date.now(),
      signal: { aborted: false },
      clientWantsUsage,
      localUsage: () => ({ prompt_tokens: 0, completion_tokens: 0 }),
    },
  );
  return { out: responder.out, outcome };
}

/** Cuts at each event boundary, elsewhere, none; the last, a read per byte, never takes the block path. */
function splits(bytes: Buffer): number[][] {
  const bounds: number[] = [];
  for (let i = bytes.indexOf('\n\n'); i >= 0; i = bytes.indexOf('\n\n', i + 2)) bounds.push(i + 2);
  const mid = bytes.indexOf('é') + 1; // inside a two-byte character
  const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
  return [bounds.slice(0, -1), bounds.filter((_, i) => i % 2).slice(0, -1), [mid, ...bounds.slice(2, -1)], [7, 300, 301, 302, 555], [], everyByte];
}

describe('SSE block fast path', () => {
  for (const wants of [false, true]) {
    it(`sends the same bytes for every split of the reads (client asked for usage: ${wants})`, async () => {
      const bytes = Buffer.from(stream);
      const results = [];
      for (const cuts of splits(bytes)) results.push(await relay(bytes, cuts, wants));
      const expected = results.at(-1)!.out; // a read per byte: the event-by-event path
      for (const r of results) {
        expect(r.out).toBe(expected);
        expect(r.outcome.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4 });
        expect(answerText(r.outcome)).toBe('Hé wörld "usage":null inside done');
      }
      expect(expected.includes('"usage":null')).toBe(wants);
      expect(expected.includes('"usage":{')).toBe(wants);
      expect(expected.endsWith('data: [DONE]\n\n')).toBe(true);
    });
  }

  it('leaves CRLF frames, data without a space, comments and other fields to the parser', () => {
    const end = (text: string, limit = text.length) => plainFramesEnd(text, 0, limit);
    expect(end('data: {}\n\ndata: {}\n\n')).toBe(20);
    expect(end('data: {}\n\ndata: {}\n\n', 12)).toBe(10);
    expect(end('data: {}\r\n\r\n')).toBe(0);
    expect(end('data: {}\n\ndata: {}\r\n\r\n')).toBe(10);
    expect(end('data:{}\n\n')).toBe(0);
    expect(end(': ping\n\n')).toBe(0);
    expect(end('event: x\ndata: {}\n\n')).toBe(0);
    expect(end('data: {}\ndata: {}\n\n')).toBe(0);
    expect(end('data: {}\n\ndata: [DONE]\n\n')).toBe(10);
    expect(end('data: {}\n')).toBe(0);
    expect(new RawFrames('data: a\n\ndata: \n\n').data()).toEqual(['a', '']);
  });

  it('decodes characters split across reads, and drops a leading byte order mark', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('aé€😀z')]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const d = new ChunkDecoder();
      expect(d.decode(bytes.subarray(0, cut)) + d.decode(bytes.subarray(cut))).toBe('aé€😀z');
    }
    // One byte at a time, too.
    const d = new ChunkDecoder();
    expect([...bytes].map((b) => d.decode(Buffer.from([b]))).join('')).toBe('aé€😀z');
  });

  it('keeps a U+FEFF that is not at the very start, and text with no mark as it is', () => {
    const feff = Buffer.from([0xef, 0xbb, 0xbf]);
    const d = new ChunkDecoder();
    expect(d.decode(Buffer.from('data: a\n\n'))).toBe('data: a\n\n');
    expect(d.decode(Buffer.concat([feff, Buffer.from('é')]))).toBe('\ufeffé');
    const e = new ChunkDecoder();
    expect(e.decode(Buffer.from([0xef]))).toBe('');
    expect(e.decode(Buffer.from('x'))).toBe('\ufffdx');
  });
});
