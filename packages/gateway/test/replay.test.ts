// Replaying failed requests: the stored body (without credentials), the
// detail endpoint, POST /api/logs/:id/replay, and `kbchat replay`.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, SIM_MODELS, startTestGateway, type TestGateway } from './helpers.js';

const run = promisify(execFile);
const CLI = 'packages/cli/bin/kbchat.js';
const UPSTREAM_400 = "Invalid 'messages[0].role': unknown role";
const UPSTREAM_503 = 'The server is overloaded or not ready yet.';

describe('replay', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: [...SIM_MODELS, 'sim-flaky-1', 'sim-flaky-1:stream', 'sim-flaky-1:cli'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function chat(json: Record<string, unknown>, token?: string): Promise<{ status: number; id: string; body: any }> {
    const res = await t.api('/v1/chat/completions', { method: 'POST', json: { messages: [{ role: 'user', content: 'replay me' }], ...json }, token });
    const text = await res.text();
    return { status: res.status, id: res.headers.get('x-request-id')!, body: text.startsWith('{') ? JSON.parse(text) : text };
  }

  async function call(path: string, init: { method?: string; json?: unknown } = {}) {
    const res = await t.api(path, init);
    return { status: res.status, body: (await res.json()) as any };
  }

  it('keeps no failed body over 1,000,000 characters: the log row says so, and replay says why it cannot', async () => {
    const failed = await chat({ model: 'sim-400', messages: [{ role: 'user', content: 'x'.repeat(1_200_000) }] });
    expect(failed.status).toBe(400);
    const detail = await call(`/api/logs/${failed.id}`);
    expect(detail.body).toMatchObject({ request_body: null, replayable: false });
    expect(detail.body.error).toMatch(/request body of 12000\d\d characters not kept: more than the 1000000 kept for replay/);
    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body.error.message).toContain('only failed requests keep theirs (up to 1000000 characters)');
  });

  it('keeps the failed body without credentials, shows it, and replays it to the same upstream error', async () => {
    const failed = await chat({ model: 'sim-400', api_key: 'sk-client-secret-in-body', user: 'u-1', temperature: 0.5 });
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toContain(UPSTREAM_400);

    const detail = await call(`/api/logs/${failed.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ request_id: failed.id, model: 'sim-400', status: 400, replayable: true });
    const stored = detail.body.request_body as string;
    expect(typeof stored).toBe('string');
    expect(JSON.parse(stored)).toMatchObject({ model: 'sim-400', user: 'u-1', temperature: 0.5, messages: [{ role: 'user', content: 'replay me' }] });
    for (const secret of ['sk-client-secret-in-body', 'api_key', 'sk-sim-upstream-key', ROOT_TOKEN]) expect(stored).not.toContain(secret);

    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ original_request_id: failed.id, status: 400, stream: false });
    expect(r.body.request_id).toMatch(/^\d{17}[0-9a-f]{12}$/);
    expect(r.body.request_id).not.toBe(failed.id);
    expect(r.body.response.error.message).toBe(`${UPSTREAM_400} (request id: ${r.body.request_id})`);
    expect(r.body.response.error.code).toBe('bad_response_status_code');

    // The replay is logged like any request, under its own id.
    const logged = await call(`/api/logs?request_id=${r.body.request_id}`);
    expect(logged.body.data).toHaveLength(1);
    expect(logged.body.data[0]).toMatchObject({ model: 'sim-400', status: 400 });
  });

  it('routes the replay by the client-facing model, not the upstream name it stored', async () => {
    const ch = await call('/api/channels', {
      method: 'POST',
      json: { type: 'openai', base_url: `${t.sim.url}/v1`, key: 'sk-sim-upstream-key', models: ['alias-503'], model_mapping: { 'alias-503': 'sim-503' } },
    });
    expect(ch.status).toBe(201);
    const failed = await chat({ model: 'alias-503' });
    expect(failed.status).toBe(503);
    const detail = await call(`/api/logs/${failed.id}`);
    expect(detail.body).toMatchObject({ model: 'alias-503', upstream_model: 'sim-503' });
    expect(JSON.parse(detail.body.request_body).model).toBe('sim-503');

    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.body.status).toBe(503);
    expect(r.body.response.error.message).toContain(UPSTREAM_503);
    const logged = await call(`/api/logs?request_id=${r.body.request_id}`);
    expect(logged.body.data[0]).toMatchObject({ model: 'alias-503', upstream_model: 'sim-503', channel_id: ch.body.id });
    await call(`/api/channels/${ch.body.id}`, { method: 'DELETE' });
  });

  it("keeps the client's OpenAI-format body when a translated (Gemini) channel failed last, and replays it", async () => {
    // Tried first: an OpenAI channel that answers 503 (retried elsewhere); then a Gemini channel that answers 400.
    const openaiCh = await call('/api/channels', {
      method: 'POST',
      json: {
        type: 'openai',
        base_url: `${t.sim.url}/v1`,
        key: 'sk-sim-upstream-key',
        priority: 10,
        models: ['mixed-wire'],
        model_mapping: { 'mixed-wire': 'sim-503' },
      },
    });
    const geminiCh = await call('/api/channels', {
      method: 'POST',
      json: {
        type: 'gemini',
        base_url: t.sim.url,
        key: 'sk-sim-upstream-key',
        priority: 0,
        models: ['mixed-wire'],
        model_mapping: { 'mixed-wire': 'gemini-sim-400' },
      },
    });
    expect([openaiCh.status, geminiCh.status]).toEqual([201, 201]);
    const failed = await chat({ model: 'mixed-wire', temperature: 0.25 });
    expect(failed.status).toBe(400);
    const detail = await call(`/api/logs/${failed.id}`);
    expect(detail.body).toMatchObject({ channel_id: geminiCh.body.id, upstream_model: 'gemini-sim-400', attempts: 2, replayable: true });
    // Not the OpenAI channel's body from the first attempt (model sim-503), not Gemini's wire (contents): the client's own.
    expect(JSON.parse(detail.body.request_body)).toEqual({ model: 'mixed-wire', temperature: 0.25, messages: [{ role: 'user', content: 'replay me' }] });

    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.body).toMatchObject({ status: 400, stream: false });
    expect(r.body.response.error.message).toContain('Request contains an invalid argument.');
    const logged = await call(`/api/logs?request_id=${r.body.request_id}`);
    expect(logged.body.data[0]).toMatchObject({ model: 'mixed-wire', upstream_model: 'gemini-sim-400', channel_id: geminiCh.body.id });
    for (const ch of [openaiCh, geminiCh]) await call(`/api/channels/${ch.body.id}`, { method: 'DELETE' });
  });

  it('returns the answer when the replay succeeds, as JSON or as stream payloads', async () => {
    const failed = await chat({ model: 'sim-flaky-1' });
    expect(failed.status).toBe(503);
    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.body).toMatchObject({ status: 200, stream: false });
    expect(r.body.response.choices[0].message.content).toMatch(/^Echo: replay me/);

    const failedStream = await chat({ model: 'sim-flaky-1:stream', stream: true });
    expect(failedStream.status).toBe(503);
    const s = await call(`/api/logs/${failedStream.id}/replay`, { method: 'POST' });
    expect(s.body).toMatchObject({ status: 200, stream: true });
    const payloads = s.body.response as any[];
    expect(payloads[payloads.length - 1]).toBe('[DONE]');
    const text = payloads
      .slice(0, -1)
      .map((p) => p.choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toMatch(/^Echo: replay me/);
  });

  it('refuses what cannot be replayed', async () => {
    const ok = await chat({ model: 'sim-chat' });
    expect(ok.status).toBe(200);
    const noBody = await call(`/api/logs/${ok.id}/replay`, { method: 'POST' });
    expect(noBody.status).toBe(409);
    expect(noBody.body.error.message).toContain('no stored body');

    expect((await call('/api/logs/20990101000000000abcdefabcdef/replay', { method: 'POST' })).status).toBe(404);

    const user = await call('/api/users', { method: 'POST', json: { username: 'replayer', password: 'replayer-password', balance: 5 } });
    const tok = await call('/api/tokens', { method: 'POST', json: { user_id: user.body.id, name: 'short-lived' } });
    const failed = await chat({ model: 'sim-400' }, tok.body.key);
    expect(failed.status).toBe(400);
    await call(`/api/tokens/${tok.body.token.id}`, { method: 'DELETE' });
    const gone = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(gone.status).toBe(409);
    expect(gone.body.error.message).toContain('token deleted');
  });

  it('refuses to replay as a token that has expired since', async () => {
    const tok = await call('/api/tokens', { method: 'POST', json: { name: 'expiring', expires_at: Date.now() + 3_600_000 } });
    expect(tok.status).toBe(201);
    const failed = await chat({ model: 'sim-400' }, tok.body.key);
    expect(failed.status).toBe(400);
    // The API takes only future expiry times; the store can say it has passed.
    await t.gw.services.accountsStore.updateToken(tok.body.token.id, { expires_at: Date.now() - 1000 });
    const r = await call(`/api/logs/${failed.id}/replay`, { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('conflict');
    expect(r.body.error.message).toContain(`token ${tok.body.token.id} has expired`);
    // Nothing was relayed: no new log row for the token.
    expect((await call(`/api/logs?token_id=${tok.body.token.id}`)).body.data).toHaveLength(1);
  });

  it('`kbchat replay` prints the status, the new request id and the upstream error', async () => {
    if (!existsSync('packages/cli/dist/main.js')) execFileSync('npx', ['tsc', '-b'], { stdio: 'inherit' });
    const failed = await chat({ model: 'sim-503' });
    expect(failed.status).toBe(503);
    const out = await run('node', [CLI, 'replay', failed.id, '--gateway-url', t.url, '--token', ROOT_TOKEN]).then(
      () => {
        throw new Error('expected exit status 1 for a failed replay');
      },
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(`Replayed request ${failed.id}`);
    expect(out.stdout).toMatch(/new request id: \d{17}[0-9a-f]{12}/);
    expect(out.stdout).toContain('status:         503 FAILED');
    expect(out.stdout).toContain(UPSTREAM_503);

    const refused = await run('node', [CLI, 'replay', failed.id, '--gateway-url', t.url, '--token', 'sk-wrong']).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the gateway refused (401)');

    const flaky = await chat({ model: 'sim-flaky-1:cli' });
    expect(flaky.status).toBe(503);
    const fixed = await run('node', [CLI, 'replay', flaky.id, '--gateway-url', t.url, '--token', ROOT_TOKEN]);
    expect(fixed.stdout).toContain('status:         200 OK');
    expect(fixed.stdout).toContain('Echo: replay me');
  });
});
