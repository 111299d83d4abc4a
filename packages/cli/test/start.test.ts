// `kbchat start` as a user runs it: one process, gateway and platform on the
// embedded stores, local models as the gateway's channel; restarted on the
// same data dir it keeps everything and creates nothing twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '../bin/kbchat.js');
const KEY = 'kbchat-cli-test-key-0123456789';

function start(dataDir: string, gatewayPort: number, platformPort: number): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn('node', [CLI, 'start', '--data-dir', dataDir, '--port', String(gatewayPort), '--platform-port', String(platformPort)], {
    env: { ...process.env, INITIAL_API_KEY: KEY, GATEWAY_HOST: '127.0.0.1', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kbchat start not ready:\n${out}`)), 90_000);
    const onData = (d: Buffer) => {
      out += d;
      if (/\[platform\] listening on/.test(out)) {
        clearTimeout(timer);
        resolve({ child, out: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`kbchat start exited with ${code}:\n${out}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('kbchat start', () => {
  let running: ChildProcess | undefined;
  afterEach(() => {
    running?.kill('SIGKILL');
  });

  it('runs the gateway and the platform together, and restarts on the same data dir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-cli-start-'));
    const gw = 20000 + Math.floor(Math.random() * 20000);
    let s = await start(dataDir, gw, gw + 1);
    running = s.child;
    const platformUrl = /\[platform\] listening on (\S+)/.exec(s.out())![1]!;
    expect(s.out()).toMatch(/\[gateway\] local models: created channel/);

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

    s = await start(dataDir, gw, gw + 1);
    running = s.child;
    expect(s.out()).not.toMatch(/root team created|general key created|root user created/);
    const list = (await (await fetch(`${platformUrl}/api/core/dataset/list`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
    expect(list.data.map((d: any) => d.name)).toEqual(['kept across restarts']);
    expect(await stop(s.child)).toBe(0);
    running = undefined;
  }, 180_000);
});
