// The upstream agent (http1/agent.ts) under the caller's control and
// its own limits, against real servers on 127.0.0.1: pause/resume
// backpressure, abort at each stage, the connect/headers/body timeouts, the
// per-origin connection limit and close().
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError } from '../src/http1/agent.js';
import { answer, cleanupAfterEach, httpServer, makeAgent, rawServer, send, sleep, until } from './agent-support.js';

cleanupAfterEach();

describe('Http1Agent: pause and resume', () => {
  it('pause holds the upstream back (its writes stall) and resume lets the answer finish', async () => {
    const total = 256 * 1024 * 1024;
    const piece = Buffer.alloc(256 * 1024, 120);
    let written = 0;
    let finished = false;
    const up = await httpServer(async (_req, res) => {
      res.writeHead(200, { 'content-length': String(total) });
      while (written < total) {
        written += piece.length;
        if (!res.write(piece)) await once(res, 'drain');
      }
      res.end(() => (finished = true));
    });
    // 250 ms: short beside the pause (700 ms at least), long beside a busy machine's gaps between 256 KB pieces (100 ms failed once in CI).
    const agent = makeAgent({ bodyTimeoutMs: 250 });
    const pending = send(agent, up.origin, {}, { discard: true, onData: (c, _chunk, out) => out.events.length === 3 && c.pause() });

    // The server's progress stops: nothing is read while paused (and the body timeout does not fire).
    await until(() => pending.out.bytes > 0, 'the first piece of the answer');
    let last = -1;
    while (written !== last) {
      last = written;
      await sleep(200);
    }
    expect(finished).toBe(false);
    expect(written).toBeLessThan(total / 2);
    const bytesWhilePaused = pending.out.bytes;
    await sleep(300);
    expect(pending.out.bytes).toBe(bytesWhilePaused);
    expect(pending.out.events).not.toContain('error');

    pending.out.control.resume();
    const out = await pending;
    expect(out.error).toBeUndefined();
    expect(out.bytes).toBe(total);
    expect(finished).toBe(true);
  });

  it('the body timeout does not fire while the caller holds the answer back, and runs again after resume', async () => {
    // Held back for four body timeouts; the rest comes half a body timeout after resume().
    const up = await rawServer((_req, s) => {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst');
      setTimeout(() => s.write('-last'), 900);
    });
    const agent = makeAgent({ bodyTimeoutMs: 200 });
    const out = await send(
      agent,
      up.origin,
      {},
      {
        onData(c, chunk) {
          if (String(chunk) !== 'first') return;
          c.pause();
          setTimeout(() => c.resume(), 800);
        },
      },
    );
    expect(out.error).toBeUndefined();
    expect(out.body).toBe('first-last');

    // The same answer, stalled by the upstream rather than held back: a body timeout.
    const stalled = await rawServer((_req, s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst'));
    const timedOut = await send(agent, stalled.origin);
    expect(timedOut.error!.code).toBe('BODY_TIMEOUT');
  });
});

describe('Http1Agent: abort', () => {
  it('aborted in onRequestStart: never connects', async () => {
    const up = await rawServer((_req, s) => s.write(answer('x')));
    const reason = new Error('the client left');
    const out = await send(makeAgent(), up.origin, {}, { onStart: (c) => c.abort(reason) });
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error).toBe(reason);
    await sleep(50);
    expect(up.sockets).toHaveLength(0);
  });

  it('aborted while connecting: nothing of the request reaches the upstream', async () => {
    const up = await rawServer((_req, s) => s.write(answer('x')));
    const reason = new Error('the client left');
    const pending = send(makeAgent(), up.origin);
    pending.out.control.abort(reason);
    const out = await pending;
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error).toBe(reason);
    await sleep(50);
    expect(up.received).toBe(0);
    expect(up.closed.every(Boolean)).toBe(true);
  });

  it('aborted while waiting for the head: the upstream sees its socket closed', async () => {
    const up = await rawServer(() => {});
    const reason = new Error('the client left');
    const pending = send(makeAgent(), up.origin, { body: 'wait' });
    await until(() => up.requests.length === 1, 'the request to arrive');
    pending.out.control.abort(reason);
    const out = await pending;
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error).toBe(reason);
    await until(() => up.closed[0] === true, 'the upstream to see the socket closed');
  });

  it('aborted in the middle of the body: no more events, and the upstream sees its socket closed', async () => {
    const up = await rawServer((_req, s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'));
    const reason = new Error('the client left');
    const pending = send(makeAgent(), up.origin, {}, { onData: (c) => c.abort(reason) });
    const out = await pending;
    expect(out.events).toEqual(['start', 'head', 'data', 'error']);
    expect(out.error).toBe(reason);
    await until(() => up.closed[0] === true, 'the upstream to see the socket closed');
    up.sockets[0]!.write('5\r\nworld\r\n0\r\n\r\n');
    await sleep(50);
    expect(out.events).toEqual(['start', 'head', 'data', 'error']);
  });

  it('aborted while queued: its request is never sent, the one ahead of it completes', async () => {
    let release: () => void = () => {};
    const up = await rawServer((req, s) => (release = () => s.write(answer(`done ${req.body}`))));
    const agent = makeAgent({ maxConnectionsPerOrigin: 1 });
    const first = send(agent, up.origin, { body: 'first' });
    const second = send(agent, up.origin, { body: 'second' });
    await until(() => up.requests.length === 1, 'the first request to arrive');
    second.out.control.abort(new Error('not wanted'));
    expect((await second).error!.message).toBe('not wanted');
    release();
    expect((await first).body).toBe('done first');
    await sleep(50);
    expect(up.requests.map((r) => r.body)).toEqual(['first']);
  });
});

const stopListener: Array<() => void> = [];
afterEach(() => stopListener.splice(0).forEach((stop) => stop()));

/** A port whose accept queue is full (a listener in a blocked process), so a new connect gets no answer. */
async function unansweredPort(): Promise<number> {
  const listener = `const s=require('net').createServer().listen({port:0,host:'127.0.0.1',backlog:1},()=>{process.stdout.write(s.address().port+'\\n');Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0)})`;
  const child = spawn(process.execPath, ['-e', listener], { stdio: ['ignore', 'pipe', 'inherit'] });
  const fillers: Socket[] = [];
  stopListener.push(() => {
    for (const f of fillers) f.destroy();
    child.kill('SIGKILL');
  });
  const [data] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(String(data).trim());
  for (let i = 0; i < 20; i++) {
    const s = connect(port, '127.0.0.1').on('error', () => {});
    fillers.push(s);
    const connected = await Promise.race([once(s, 'connect').then(() => true), sleep(300).then(() => false)]);
    if (!connected) return port;
  }
  throw new Error('the accept queue never filled: connect timeouts cannot be tested here');
}

describe('Http1Agent: timeouts', () => {
  it('connect timeout: a connection the upstream never answers', async () => {
    const port = await unansweredPort();
    const started = Date.now();
    const out = await send(makeAgent({ connectTimeoutMs: 200 }), `http://127.0.0.1:${port}`);
    const took = Date.now() - started;
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error).toBeInstanceOf(AgentError);
    expect(out.error!.code).toBe('CONNECT_TIMEOUT');
    expect(out.error!.message).toContain(`127.0.0.1:${port}`);
    expect(took).toBeGreaterThanOrEqual(195);
    expect(took).toBeLessThan(1500);
  });

  it('headers timeout: a request the upstream never answers', async () => {
    const up = await rawServer(() => {});
    const started = Date.now();
    const out = await send(makeAgent({ headersTimeoutMs: 200 }), up.origin);
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error!.code).toBe('HEADERS_TIMEOUT');
    await until(() => up.closed[0] === true, 'the agent to close the connection');
  });

  it('body timeout: an answer that stalls after its head', async () => {
    const up = await rawServer((_req, s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    let firstData = 0;
    const out = await send(makeAgent({ bodyTimeoutMs: 200, headersTimeoutMs: 5000 }), up.origin, {}, { onData: () => (firstData = Date.now()) });
    expect(Date.now() - firstData).toBeGreaterThanOrEqual(195);
    expect(out.events).toEqual(['start', 'head', 'data', 'error']);
    expect(out.error!.code).toBe('BODY_TIMEOUT');
    expect(out.body).toBe('abc');
  });
});

describe('Http1Agent: the connection limit and close()', () => {
  it('queues requests beyond maxConnectionsPerOrigin; all complete, never more connections than the limit', async () => {
    let active = 0;
    let maxActive = 0;
    const up = await httpServer((_req, res, body) => {
      maxActive = Math.max(maxActive, ++active);
      setTimeout(() => {
        active--;
        res.end(`echo ${body}`);
      }, 30);
    });
    const agent = makeAgent({ maxConnectionsPerOrigin: 2 });
    const outs = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => send(agent, up.origin, { body: String(i) })));
    expect(outs.map((o) => o.body)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `echo ${i}`));
    expect(up.sockets).toHaveLength(2);
    expect(maxActive).toBe(2);
  });

  it('the retry of a stale connection stays within the limit and keeps its place ahead of the queue', async () => {
    const up = await rawServer((req, s) => (req.socket === 0 && req.onSocket === 1 ? s.destroy() : s.write(answer(`${req.body} on ${req.socket}`))));
    const agent = makeAgent({ maxConnectionsPerOrigin: 1 });
    expect((await send(agent, up.origin, { body: 'one' })).body).toBe('one on 0');
    const [two, three] = await Promise.all([send(agent, up.origin, { body: 'two' }), send(agent, up.origin, { body: 'three' })]);
    expect([two.body, three.body]).toEqual(['two on 1', 'three on 1']);
    expect(up.sockets).toHaveLength(2);
  });

  it('a queued request that took a connection whose answer had extra bytes is sent again on a new one', async () => {
    // The first answer completes (handing the connection to the queued request) and then its extra bytes drop the connection.
    const up = await rawServer((req, s) => s.write(answer(`${req.body} on ${req.socket}`) + (req.body === 'one' ? 'extra' : '')));
    const agent = makeAgent({ maxConnectionsPerOrigin: 1 });
    const [one, two] = await Promise.all([send(agent, up.origin, { body: 'one' }), send(agent, up.origin, { body: 'two' })]);
    expect([one.body, two.body]).toEqual(['one on 0', 'two on 1']);
  });

  it('close() ends idle connections at once, waits for busy ones, and refuses new requests', async () => {
    let releaseBusy: () => void = () => {};
    const up = await rawServer((req, s) => {
      if (req.body === 'busy') releaseBusy = () => s.write(answer('busy done'));
      else s.write(answer('quick done'));
    });
    const agent = makeAgent();
    const busy = send(agent, up.origin, { body: 'busy' });
    const quick = await send(agent, up.origin, { body: 'quick' });
    expect(quick.body).toBe('quick done');
    await until(() => up.requests.length === 2, 'both requests to arrive');
    const busySocket = up.requests.find((r) => r.body === 'busy')!.socket;
    const idleSocket = 1 - busySocket;

    let closed = false;
    const closing = agent.close().then(() => (closed = true));
    await until(() => up.closed[idleSocket] === true, 'the idle connection to be closed');
    const refused = await send(agent, up.origin);
    expect(refused.error!.code).toBe('AGENT_CLOSED');
    await sleep(50);
    expect(closed).toBe(false);
    expect(up.closed[busySocket]).toBe(false);

    const again = agent.close(); // a second call (a second shutdown signal) resolves too
    releaseBusy();
    expect((await busy).body).toBe('busy done');
    await Promise.all([closing, again]);
    await until(() => up.closed[busySocket] === true, 'the busy connection to be closed after its answer');
  });
});
