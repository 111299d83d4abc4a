// `kbchat start` as a user runs it: one process, gateway and platform on the
// embedded stores, local models as the gateway's channel; restarted on the
// same data dir it keeps everything and creates nothing twice.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, plainEnv, startKbchat, stop } from './helpers.js';

const KEY = 'kbchat-cli-test-key-0123456789';

function start(dataDir: string, gatewayPort: number, platformPort: number) {
  return startKbchat(
    ['start', '--data-dir', dataDir, '--gateway-port', String(gatewayPort), '--port', String(platformPort)],
    plainEnv({ INITIAL_API_KEY: KEY }),
  );
}

/** Whether something accepts TCP connections at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('kbchat start', () => {
  let running: ChildProcess | undefined;
  afterEach(() => {
    running?.kill('SIGKILL');
  });

  it('runs the gateway and the platform together, and restarts on the same data dir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-cli-start-'));
    const [gw, platformPort] = await freePorts();
    let s = await start(dataDir, gw, platformPort);
    running = s.child;
    const platformUrl = /\[platform\] listening on (\S+)/.exec(s.out())![1]!;
    expect(s.out()).toMatch(/\[gateway\] local models: created channel/);

    // --port is the platform's, --gateway-port the gateway's; with no HOST / GATEWAY_HOST both
    // serve this machine only, and say so.
    expect(platformUrl).toBe(`http://127.0.0.1:${platformPort}`);
    expect(s.out()).toContain(`[platform] listening on http://127.0.0.1:${platformPort} (this machine only;`);
    expect(s.out()).toContain(`[gateway] listening on http://127.0.0.1:${gw} (this machine only;`);
    const outward = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4');
    if (outward) {
      expect(await accepts(outward.address, platformPort)).toBe(false);
      expect(await accepts(outward.address, gw)).toBe(false);
    }

    // One root password, shown once by each service that created its root with it, signs in to both.
    const shown = [...s.out().matchAll(/root user created; password \(shown once\): (\S+)/g)].map((m) => m[1]);
    expect(shown).toHaveLength(2);
    expect(shown[0]).toBe(shown[1]);
    for (const url of [platformUrl, `http://127.0.0.1:${gw}`]) {
      const login = await fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: shown[0] }),
      });
      expect(login.status, url).toBe(200);
    }

    // The platform's token at the gateway is kept for the owner only.
    const tokenFile = join(dataDir, 'platform-gateway-token');
    expect(statSync(tokenFile).mode & 0o077).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const models = (await (await fetch(`http://127.0.0.1:${gw}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
    expect(models.data.map((m: any) => m.id)).toEqual(expect.arrayContaining(['local-embed', 'local-extractive']));

    const created = await fetch(`${platformUrl}/api/core/dataset/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'kept across restarts' }),
    });
    expect(created.status).toBe(200);
    expect(await stop(s.child)).toBe(0);

    s = await start(dataDir, gw, platformPort);
    running = s.child;
    expect(s.out()).not.toMatch(/root team created|general key created|root user created/);
    const list = (await (await fetch(`${platformUrl}/api/core/dataset/list`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
    expect(list.data.map((d: any) => d.name)).toEqual(['kept across restarts']);
    expect(await stop(s.child)).toBe(0);
    running = undefined;
  }, 180_000);

  it('answers a question about an uploaded document from it, through local-extractive, with no provider key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-cli-chat-'));
    const [gw, platformPort] = await freePorts();
    const s = await start(dataDir, gw, platformPort);
    running = s.child;
    const platformUrl = /\[platform\] listening on (\S+)/.exec(s.out())![1]!;
    const api = async (path: string, json: unknown) => {
      const res = await fetch(`${platformUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body.data;
    };
    const datasetId = await api('/api/core/dataset/create', { name: 'manuals' });
    const text = [
      '# Zorblax 3000 manual',
      'The Zorblax 3000 is a handheld label printer for warehouses.',
      '## Battery',
      'The Zorblax 3000 battery lasts 14 hours of continuous printing and recharges in 90 minutes over USB-C.',
      '## Cleaning',
      'Wipe the print head with an alcohol pad once a month. Never use water on the print head.',
    ].join('\n\n');
    const { collectionId } = await api('/api/core/dataset/collection/create/text', { datasetId, name: 'zorblax.md', text });
    const until = Date.now() + 120_000;
    for (;;) {
      const d = (
        (await (
          await fetch(`${platformUrl}/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`, { headers: { authorization: `Bearer ${KEY}` } })
        ).json()) as any
      ).data;
      if (d.total > 0 && d.done === d.total) break;
      if (d.failed > 0 || Date.now() > until) throw new Error(`not indexed: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const appId = await api('/api/core/app/create', { name: 'manual helper', model: 'local-extractive', datasets: [datasetId] });
    const appKey = await api('/api/support/openapi/create', { name: 'helper key', appId });
    const res = await fetch(`${platformUrl}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'How long does the Zorblax battery last?' }], detail: true }),
    });
    const answer = (await res.json()) as any;
    expect(res.status, JSON.stringify(answer)).toBe(200);
    expect(answer.choices[0].message.content).toMatch(/14 hours/);
    expect(answer.choices[0].message.content).not.toMatch(/alcohol/);
    expect(answer.responseData.find((r: any) => r.moduleType === 'chatNode').model).toBe('local-extractive');
    expect(await stop(s.child)).toBe(0);
    running = undefined;
  }, 240_000);
});
