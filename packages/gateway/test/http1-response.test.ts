// The upstream response parser (http1/response-parser.ts) must read the same
// answer however the socket splits its bytes: each response below is fed
// whole, one byte at a time and cut in two at every position, and every way
// must give the expected head, body bytes, completion and leftover count (or
// the same error).
import { describe, expect, it } from 'vitest';
import { ResponseParser, ResponseProtocolError } from '../src/http1/response-parser.js';

interface Outcome {
  heads: Array<{ status: number; headers: Record<string, string> }>;
  body: string;
  /** The `reusable` flag of each onComplete call. */
  completions: boolean[];
  done: boolean;
  /** Sum of what feed() returned: bytes past the end of the response. */
  left: number;
  error?: string;
}

type Expected = Partial<Omit<Outcome, 'error'>> & { error?: RegExp };

interface Case {
  name: string;
  bytes: string;
  /** Call end() after the last feed: the connection closed. */
  end?: boolean;
  maxHeadBytes?: number;
  expected: Expected;
}

function run(pieces: Buffer[], end: boolean, maxHeadBytes?: number): Outcome {
  const out: Outcome = { heads: [], body: '', completions: [], done: false, left: 0 };
  const body: Buffer[] = [];
  const parser = new ResponseParser(
    {
      onHead: (status, headers) => out.heads.push({ status, headers: { ...headers } }),
      onBody: (chunk) => body.push(Buffer.from(chunk)), // copied: a subarray must not change later
      onComplete: (reusable) => out.completions.push(reusable),
    },
    maxHeadBytes,
  );
  try {
    for (const piece of pieces) out.left += parser.feed(piece);
    if (end) parser.end();
  } catch (err) {
    expect(err).toBeInstanceOf(ResponseProtocolError);
    expect((err as ResponseProtocolError).code).toBe('UPSTREAM_BAD_RESPONSE');
    out.error = (err as Error).message;
  }
  out.body = Buffer.concat(body).toString('utf8');
  out.done = parser.done;
  return out;
}

/** Every way of feeding `bytes` this test tries, with a name for the failure message. */
function splits(bytes: Buffer): Array<[string, Buffer[]]> {
  const ways: Array<[string, Buffer[]]> = [['whole', [bytes]]];
  ways.push(['byte by byte', [...bytes].map((b) => Buffer.from([b]))]);
  for (let i = 1; i < bytes.length; i++) ways.push([`cut at ${i}`, [bytes.subarray(0, i), bytes.subarray(i)]]);
  return ways;
}

const ok = (status: number, headers: Record<string, string>, body: string, reusable: boolean, left = 0): Expected => ({
  heads: [{ status, headers }],
  body,
  completions: [reusable],
  done: true,
  left,
});

const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
const NEXT = 'HTTP/1.1 200 OK\r\n';

const CASES: Case[] = [
  {
    name: 'content-length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nhé, wörld!',
    expected: ok(200, { 'content-type': 'text/plain', 'content-length': '12' }, 'hé, wörld!', true),
  },
  {
    name: 'content-length 0',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
    expected: ok(200, { 'content-length': '0' }, '', true),
  },
  {
    name: 'the same content-length twice',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok',
    expected: ok(200, { 'content-length': '2, 2' }, 'ok', true),
  },
  {
    name: 'chunked with extensions and trailers',
    bytes: `${CHUNKED_HEAD}5;name=value\r\nhello\r\n7 ; a="b"\r\n, world\r\n0;last\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n`,
    expected: ok(200, { 'transfer-encoding': 'chunked' }, 'hello, world', true),
  },
  {
    name: 'chunk sizes in upper and lower case hex',
    bytes: `${CHUNKED_HEAD}1A\r\n${'a'.repeat(26)}\r\n1b\r\n${'b'.repeat(27)}\r\n0\r\n\r\n`,
    expected: ok(200, { 'transfer-encoding': 'chunked' }, 'a'.repeat(26) + 'b'.repeat(27), true),
  },
  {
    name: '100 Continue and 103 Early Hints before the real head',
    bytes: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc',
    expected: ok(200, { 'content-length': '3' }, 'abc', true),
  },
  {
    name: '204 without a body',
    bytes: 'HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n',
    expected: ok(204, { 'x-a': '1' }, '', true),
  },
  {
    name: '304 with a content-length but no body',
    bytes: 'HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n',
    expected: ok(304, { 'content-length': '100' }, '', true),
  },
  {
    name: 'HTTP/1.0: not reusable',
    bytes: 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
    expected: ok(200, { 'content-length': '2' }, 'ok', false),
  },
  {
    name: 'Connection: close: not reusable',
    bytes: 'HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok',
    expected: ok(200, { connection: 'keep-alive, Close', 'content-length': '2' }, 'ok', false),
  },
  {
    name: 'no length: the body runs until the close',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end',
    end: true,
    expected: ok(200, { 'content-type': 'text/plain' }, 'until the end', false),
  },
  {
    name: 'no length and no close yet: not complete',
    bytes: 'HTTP/1.1 200 OK\r\n\r\nso far',
    expected: { heads: [{ status: 200, headers: {} }], body: 'so far', completions: [], done: false, left: 0 },
  },
  {
    name: 'transfer-encoding and content-length: read as chunked, never reused',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n',
    expected: ok(200, { 'content-length': '5', 'transfer-encoding': 'chunked' }, 'ab', false),
  },
  {
    name: 'repeated headers joined, names lower-cased, values trimmed',
    bytes: 'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Pad:   spaced out  \r\nEmpty:\r\nContent-Length: 0\r\n\r\n',
    expected: ok(200, { 'set-cookie': 'a=1, b=2', 'x-pad': 'spaced out', empty: '', 'content-length': '0' }, '', true),
  },
  {
    name: 'leftover bytes after a content-length body',
    bytes: `HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok${NEXT}`,
    expected: ok(200, { 'content-length': '2' }, 'ok', true, NEXT.length),
  },
  {
    name: 'leftover bytes after a chunked body',
    bytes: `${CHUNKED_HEAD}2\r\nok\r\n0\r\n\r\njunk`,
    expected: ok(200, { 'transfer-encoding': 'chunked' }, 'ok', true, 4),
  },
  {
    name: 'leftover bytes after a 204',
    bytes: `HTTP/1.1 204 No Content\r\n\r\n${NEXT}`,
    expected: ok(204, {}, '', true, NEXT.length),
  },
  {
    name: 'a head of exactly the limit',
    maxHeadBytes: 64,
    bytes: `HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Fill: ${'f'.repeat(64 - 44)}\r\n\r\n!`,
    expected: ok(200, { 'content-length': '1', 'x-fill': 'f'.repeat(20) }, '!', true),
  },
];

const BAD = (error: RegExp, heads: Outcome['heads'] = []): Case['expected'] => ({ heads, completions: [], done: false, error });

const ERRORS: Case[] = [
  { name: 'a status line without a status', bytes: 'HTTP/1.1 20 OK\r\n\r\n', expected: BAD(/bad status line "HTTP\/1.1 20 OK"/) },
  { name: 'an HTTP/2 status line', bytes: 'HTTP/2 200\r\n\r\n', expected: BAD(/bad status line/) },
  { name: 'not HTTP at all', bytes: 'SSH-2.0-OpenSSH_9.6\r\n\r\n', expected: BAD(/bad status line "SSH-2.0-OpenSSH_9.6"/) },
  { name: 'a header line without a colon', bytes: 'HTTP/1.1 200 OK\r\nX-No-Colon\r\n\r\n', expected: BAD(/bad header line "X-No-Colon"/) },
  { name: 'a space before the colon', bytes: 'HTTP/1.1 200 OK\r\nX-A : 1\r\n\r\n', expected: BAD(/bad header line/) },
  {
    name: 'an obs-fold continuation line',
    bytes: 'HTTP/1.1 200 OK\r\nX-A: a\r\n  folded: b\r\nContent-Length: 0\r\n\r\n',
    expected: BAD(/bad header line " {2}folded: b"/),
  },
  {
    name: 'a content-length that is not a number',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n',
    expected: BAD(/bad content-length "12abc"/, [{ status: 200, headers: { 'content-length': '12abc' } }]),
  },
  {
    name: 'a negative content-length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
    expected: BAD(/bad content-length/, [{ status: 200, headers: { 'content-length': '-1' } }]),
  },
  {
    name: 'conflicting content-lengths',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
    expected: BAD(/bad content-length "5, 6"/, [{ status: 200, headers: { 'content-length': '5, 6' } }]),
  },
  {
    name: 'a chunk size that is not hex',
    bytes: `${CHUNKED_HEAD}zz\r\n`,
    expected: BAD(/bad chunk size "zz"/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]),
  },
  {
    name: 'an empty chunk size',
    bytes: `${CHUNKED_HEAD};ext\r\n`,
    expected: BAD(/bad chunk size/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]),
  },
  {
    name: 'chunk data without its CRLF',
    bytes: `${CHUNKED_HEAD}5\r\nhelloX\r\n0\r\n\r\n`,
    expected: { ...BAD(/a chunk does not end with CRLF/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]), body: 'hello' },
  },
  {
    name: 'a chunk-size line over 4096 bytes',
    bytes: `${CHUNKED_HEAD}5;x=${'e'.repeat(5000)}\r\nhello\r\n0\r\n\r\n`,
    expected: BAD(/chunk size line is too long/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]),
  },
  {
    name: 'trailers over 4096 bytes',
    bytes: `${CHUNKED_HEAD}0\r\nX-T: ${'t'.repeat(5000)}\r\n\r\n`,
    expected: BAD(/trailers are too long/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]),
  },
  {
    name: 'a head over the limit',
    maxHeadBytes: 64,
    bytes: `HTTP/1.1 200 OK\r\nX-Fill: ${'f'.repeat(100)}\r\n\r\n`,
    expected: BAD(/the headers are longer than 64 bytes/),
  },
  {
    name: 'a head one byte over the limit',
    maxHeadBytes: 64,
    bytes: `HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Fill: ${'f'.repeat(65 - 44)}\r\n\r\n!`,
    expected: BAD(/the headers are longer than 64 bytes/),
  },
  { name: '101 Switching Protocols', bytes: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', expected: BAD(/switched protocols/) },
  {
    name: 'the close in the middle of a content-length body',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd',
    end: true,
    expected: { ...BAD(/closed in the middle of the answer/, [{ status: 200, headers: { 'content-length': '10' } }]), body: 'abcd' },
  },
  {
    name: 'the close in the middle of a chunk',
    bytes: `${CHUNKED_HEAD}5\r\nhel`,
    end: true,
    expected: { ...BAD(/closed in the middle/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]), body: 'hel' },
  },
  {
    name: 'the close before the last chunk',
    bytes: `${CHUNKED_HEAD}2\r\nok\r\n`,
    end: true,
    expected: { ...BAD(/closed in the middle/, [{ status: 200, headers: { 'transfer-encoding': 'chunked' } }]), body: 'ok' },
  },
  { name: 'the close in the middle of the head', bytes: 'HTTP/1.1 200 OK\r\nContent-Le', end: true, expected: BAD(/closed in the middle/) },
  { name: 'the close after a 100 Continue', bytes: 'HTTP/1.1 100 Continue\r\n\r\n', end: true, expected: BAD(/closed in the middle/) },
];

describe('ResponseParser, fed every way the bytes can be split', () => {
  for (const c of [...CASES, ...ERRORS]) {
    it(c.name, () => {
      const bytes = Buffer.from(c.bytes, 'utf8');
      const { error, ...rest } = c.expected;
      const whole = run([bytes], c.end ?? false, c.maxHeadBytes);
      expect(whole).toMatchObject(rest);
      if (error) expect(whole.error).toMatch(error);
      else expect(whole.error).toBeUndefined();
      for (const [how, pieces] of splits(bytes)) {
        expect(run(pieces, c.end ?? false, c.maxHeadBytes), how).toEqual(whole);
      }
    });
  }
});

describe('ResponseParser, edges', () => {
  it('end() before any byte says the connection closed before an answer; feed() after the end returns every byte', () => {
    const parser = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    expect(parser.started).toBe(false);
    expect(() => parser.end()).toThrow(/closed before an answer/);

    const done = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    expect(done.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'))).toBe(0);
    expect(done.started).toBe(true);
    expect(done.feed(Buffer.from('more'))).toBe(4);
    expect(() => done.end()).not.toThrow();
  });

  it('a body split into many reads reaches onBody as those reads, without copies of the whole', () => {
    const bodies: number[] = [];
    const parser = new ResponseParser({ onHead() {}, onBody: (b) => bodies.push(b.length), onComplete() {} });
    parser.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n'));
    for (let i = 0; i < 3; i++) parser.feed(Buffer.alloc(100_000, 97));
    expect(bodies).toEqual([100_000, 100_000, 100_000]);
    expect(parser.done).toBe(true);
  });
});
