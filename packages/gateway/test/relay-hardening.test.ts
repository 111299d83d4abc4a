// Faults a hostile client or a broken upstream could use to hurt everyone
// else: switching models off with bad requests, poisoning money with absurd
// usage, unknown error shapes and statuses, stalled bodies, slow readers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { startTestGateway, ROOT_TOKEN, type TestGateway } from './helpers.js';
import { expectRequestId } from './relay-support.js';

/** A second upstream speaking HTTP, playing what the simulator does not: each model one fault. */
function brokenUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const model = (JSON.parse(raw || '{}') as { model?: string }).model;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (model === 'absurd-usage') {
        return json(200, {
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1e300, completion_tokens: -5, total_tokens: 1e300 },
        });
      }
      if (model === 'empty-then-slow') {
        // An empty stream, and a non-stream answer that takes its time.
        const body = JSON.parse(raw) as { stream?: boolean };
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(
            `data: ${JSON.stringify({ id: 'e', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`,
          );
          return res.end('data: [DONE]\n\n');
        }
        setTimeout(
          () =>
            json(200, {
              id: 'e',
              object: 'chat.completion',
              created: 1,
              model,
              choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }],
            }),
          1500,
        ).unref();
        return;
      }
      if (model === 'fastapi-422') return json(422, { detail: [{ loc: ['body', 'messages'], msg: 'field required', type: 'missing' }] });
      if (model === 'status-600') return json(600, { error: { message: 'beyond HTTP' } });
      if (model === 'stall-body') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"x",');
        return; // never finishes
      }
      json(404, { error: { message: `The model \`${model}\` does not exist`, type: 'invalid_request_error', code: 'model_not_found' } });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
      });
    });
  });
}

describe('relay hardening', () => {
  let t: TestGateway;
  let broken: Awaited<ReturnType<typeof brokenUpstream>>;
  let longSim: UpstreamSim;

  beforeAll(async () => {
    broken = await brokenUpstream();
    longSim = await startUpstreamSim({ port: 0, tokens: 8_000 });
    t = await startTestGateway({
      env: {
        ROOT_INITIAL_BALANCE: '1000000',
        BROKEN_API_KEY: 'x',
        BROKEN_BASE_URL: broken.url,
        BROKEN_MODELS: 'absurd-usage,fastapi-422,status-600,stall-body,missing-model,empty-then-slow',
      },
      config: { disableThreshold: 2, upstreamIdleTimeoutMs: 500 },
    });
  });
  afterAll(async () => {
    await t?.close();
    await broken?.close();
    await longSim?.close();
  });

  const chat = (model: string, extra: Record<string, unknown> = {}, token = ROOT_TOKEN) =>
    t.api('/v1/chat/completions', { method: 'POST', token, json: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });

  it('requests a model cannot serve (404 upstream) never switch the model off for everyone', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'sim-chat', input: 'not a vector model' } });
      expect(res.status).toBe(404);
    }
    expect(t.gw.services.registry.isModelDisabled(t.gw.services.registry.all()[0]!.id, 'sim-chat')).toBeUndefined();
    expect((await chat('sim-chat')).status).toBe(200);
  });

  it('refuses model names that are too long or hold control characters, naming the field', async () => {
    for (const model of ['m'.repeat(201), 'a\u0000b', 'tab\there']) {
      const res = await chat(model);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error.param).toBe('model');
      expectRequestId(body.error.message, res.headers.get('x-request-id'));
    }
  });

  it('clamps absurd upstream usage: money and logs stay sane', async () => {
    const { ledger, accountsStore, logsStore } = t.gw.services;
    await ledger.flush();
    const before = Number((await accountsStore.userByName('root'))!.balance);
    const res = await chat('absurd-usage');
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    await ledger.flush();
    const after = Number((await accountsStore.userByName('root'))!.balance);
    expect(Number.isSafeInteger(after)).toBe(true);
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThan(before);
    const [row] = await logsStore.list({ requestId: id }, 0, 1);
    expect(row).toMatchObject({ prompt_tokens: 1_000_000_000, completion_tokens: 0, status: 200 });
    // The next request is billed and logged as usual.
    expect((await chat('sim-chat')).status).toBe(200);
  });

  it('passes on an upstream error body of an unknown shape in its own words', async () => {
    const res = await chat('fastapi-422');
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.error.code).toBe('bad_response_status_code');
    expect(body.error.message).toContain('field required');
  });

  it('turns a status outside 400-599 into a 502 that names it', async () => {
    const res = await chat('status-600');
    expect(res.status).toBe(502);
    const body = await res.json();
    expect(body.error.message).toContain('upstream answered with status 600');
    expectRequestId(body.error.message, res.headers.get('x-request-id'));
  });

  it('reports a body that stalls after its headers as a timeout (504), not a dropped stream', async () => {
    const res = await chat('stall-body');
    expect(res.status).toBe(504);
    expect((await res.json()).error.code).toBe('upstream_timeout');
  });

  it('logs a client that leaves during the empty-stream fallback as 499, not as an upstream fault', async () => {
    const controller = new AbortController();
    const pending = fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'empty-then-slow', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }).catch((err: Error) => err);
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    await pending;
    const { ledger, logsStore } = t.gw.services;
    await vi.waitFor(async () => {
      await ledger.flush();
      const [row] = await logsStore.list({ model: 'empty-then-slow' }, 0, 1);
      expect(row).toMatchObject({ status: 499 });
    });
  });

  it('reserves for every one of n choices', async () => {
    const { accounts } = t.gw.services;
    const user = await accounts.createUser({ username: 'frugal', password: 'frugal-password', balance_micros: 20_000 });
    const { key } = await accounts.createToken(user.id, { name: 'frugal' });
    // 1,000 output tokens at 8 units per 1M = 8,000 micro-units: fits once, not 128 times.
    expect((await chat('sim-chat', { max_tokens: 1000 }, key)).status).toBe(200);
    const res = await chat('sim-chat', { max_tokens: 1000, n: 128 }, key);
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('insufficient_user_quota');
  });

  it('refuses an anonymous request before reading its body', async () => {
    const res = await fetch(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(5_000_000) });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('missing_token');
  });

  it('leaves no listeners behind on a slow reader of a long stream', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      // A channel whose answers are 8,000 words long, streamed a word a chunk.
      await t.gw.services.channels.create({
        type: 'openai',
        base_url: `${longSim.url}/v1`,
        key: 'k',
        models: ['long-chat'],
        model_mapping: { 'long-chat': 'sim-chat' },
      });
      const body = JSON.stringify({ model: 'long-chat', stream: true, messages: [{ role: 'user', content: 'a rather long answer please' }] });
      const text = await new Promise<string>((resolve, reject) => {
        const req = http.request(
          `${t.url}/v1/chat/completions`,
          { method: 'POST', headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' } },
          (res) => {
            let out = '';
            res.setEncoding('utf8');
            let reads = 0;
            res.on('data', (c: string) => {
              out += c;
              // Read in fits and starts, so that the gateway's writes meet backpressure often.
              if (++reads % 4 === 0) {
                res.pause();
                setTimeout(() => res.resume(), 2);
              }
            });
            res.on('end', () => resolve(out));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(text.split('\n\n').length).toBeGreaterThan(8_000);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
