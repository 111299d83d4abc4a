// The chat stream reader (src/chat/stream.ts) on real byte streams: every split
// position (inside a line, inside a multi-byte character, between CR and LF),
// events in order, comments and unknown fields skipped, an error event, a
// non-2xx JSON answer, and an abort.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ChatStreamError, readChatStream, type ChatEvent } from '../src/chat/stream.js';

const STREAM = [
  ': a comment the reader skips',
  'event: flowNodeStatus',
  'data: {"status":"running","name":"Dataset search"}',
  '',
  'event: answer',
  'data: {"choices":[{"delta":{"content":"灯塔守护者 "}}]}',
  '',
  'id: 7',
  'event: answer',
  'data: {"choices":[{"delta":{"content":"painted it [1]."}}]}',
  '',
  'event: answer',
  'data: [DONE]',
  '',
  'event: flowResponses',
  'data: [{"moduleType":"datasetSearchNode",',
  'data: "quoteList":[]}]',
  '',
].join('\r\n');

function response(chunks: Uint8Array[], init: ResponseInit = { status: 200 }): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  return new Response(body, init);
}

async function read(res: Response): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  await readChatStream(res, (e) => events.push(e));
  return events;
}

const EXPECTED: ChatEvent[] = [
  { type: 'status', name: 'Dataset search' },
  { type: 'answer', text: '灯塔守护者 ' },
  { type: 'answer', text: 'painted it [1].' },
  { type: 'done' },
  { type: 'responseData', records: [{ moduleType: 'datasetSearchNode', quoteList: [] }] },
];

describe('the chat stream reader', () => {
  it('reads the same events however the bytes are split, CRLF and multi-byte characters included', async () => {
    const bytes = new TextEncoder().encode(STREAM);
    expect(await read(response([bytes]))).toEqual(EXPECTED);
    for (let at = 1; at < bytes.length; at++) {
      expect(await read(response([bytes.slice(0, at), bytes.slice(at)])), `split at ${at}`).toEqual(EXPECTED);
    }
    // One byte at a time, and LF-only and CR-only line ends.
    expect(await read(response([...bytes].map((b) => Uint8Array.of(b))))).toEqual(EXPECTED);
    expect(await read(response([new TextEncoder().encode(STREAM.replace(/\r\n/g, '\n'))]))).toEqual(EXPECTED);
    const crOnly = new TextEncoder().encode(STREAM.replace(/\r\n/g, '\r'));
    for (let at = 1; at < crOnly.length; at += 7) expect(await read(response([crOnly.slice(0, at), crOnly.slice(at)]))).toEqual(EXPECTED);
  });

  it('dispatches a last message that has no blank line after it', async () => {
    const events = await read(response([new TextEncoder().encode('event: answer\ndata: {"choices":[{"delta":{"content":"end"}}]}')]));
    expect(events).toEqual([{ type: 'answer', text: 'end' }]);
  });

  it("turns an error event into an error with the platform's message and request id", async () => {
    const stream =
      'event: answer\ndata: {"choices":[{"delta":{"content":"half"}}]}\n\nevent: error\ndata: {"code":502,"message":"Connection error: gateway down"}\n\n';
    const seen: ChatEvent[] = [];
    const err = await readChatStream(response([new TextEncoder().encode(stream)], { status: 200, headers: { 'x-request-id': 'req-9' } }), (e) =>
      seen.push(e),
    ).catch((e) => e);
    expect(seen).toEqual([{ type: 'answer', text: 'half' }]);
    expect(err).toBeInstanceOf(ChatStreamError);
    expect(err.message).toBe('Connection error: gateway down');
    expect(err.requestId).toBe('req-9');
    expect(err.status).toBe(502);
  });

  it('reads a non-2xx JSON answer as its message and status', async () => {
    const body = JSON.stringify({ code: 403, statusText: 'app_key_required', message: 'Key is error.', error: { message: 'Key is error.' } });
    const err = await read(response([new TextEncoder().encode(body)], { status: 403, headers: { 'x-request-id': 'req-1' } })).catch((e) => e);
    expect(err).toBeInstanceOf(ChatStreamError);
    expect([err.message, err.status, err.requestId]).toEqual(['Key is error.', 403, 'req-1']);
    const plain = await read(new Response('upstream exploded', { status: 500, statusText: 'Internal Server Error' })).catch((e) => e);
    expect(plain.message).toBe('upstream exploded');
  });

  it('stops reading when aborted, keeping what was read', async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('event: answer\ndata: {"choices":[{"delta":{"content":"partial"}}]}\n\n'));
        controller.signal.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
      },
    });
    const seen: ChatEvent[] = [];
    const reading = readChatStream(new Response(body), (e) => {
      seen.push(e);
      controller.abort();
    });
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual([{ type: 'answer', text: 'partial' }]);
  });

  it('reads fixed answers, variables and unknown events as the platform sends them', async () => {
    const stream = [
      'event: updateVariables',
      'data: {"city":"Hangzhou"}',
      '',
      'event: somethingNew',
      'data: {"x":1}',
      '',
      'retry: 1000',
      '',
      'event: fastAnswer',
      'data: {"choices":[{"delta":{"role":"assistant","content":"Fixed reply"}}]}',
      '',
      'event: answer',
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}',
      '',
      'data: [DONE]',
      '',
      '',
    ].join('\n');
    expect(await read(response([new TextEncoder().encode(stream)]))).toEqual([
      { type: 'variables', values: { city: 'Hangzhou' } },
      { type: 'answer', text: 'Fixed reply' },
      { type: 'done' },
    ]);
  });

  it('Stop aborts a real fetch mid-stream: the reader rejects with AbortError after the events already read', async () => {
    let closed!: () => void;
    const clientLeft = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-live' });
      res.write('event: answer\ndata: {"choices":[{"delta":{"content":"first "}}]}\n\n');
      req.socket.on('close', closed); // the platform sees the client leave (and cancels the model call)
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const controller = new AbortController();
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: controller.signal });
      const seen: ChatEvent[] = [];
      const reading = readChatStream(res, (e) => {
        seen.push(e);
        setTimeout(() => controller.abort(), 20);
      });
      await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
      expect(seen).toEqual([{ type: 'answer', text: 'first ' }]);
      await clientLeft;
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
