// Operator mistakes that used to lose data, tried as a newcomer would, with
// real kbchat processes: a second start on one data dir, a port already in
// use, a broken config.json, `npx kbchat start &` then `kill $!`.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, freePorts, plainEnv, runKbchat, sleep, startKbchat, startUntil, stop } from './helpers.js';

const KEY = 'kbchat-cli-mistakes-key-0123456789';
const children: ChildProcess[] = [];
const servers: Server[] = [];
const orphans: { pid: number; lock: string }[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  // Only while its lock still names it: once it has stopped, its pid may be another process's.
  for (const { pid, lock } of orphans.splice(0)) if (existsSync(lock) && readFileSync(lock, 'utf8').includes(`"pid":${pid},`)) process.kill(pid, 'SIGKILL');
  for (const server of servers.splice(0)) server.close();
});

function startArgs(dataDir: string, [gatewayPort, platformPort]: [number, number]): string[] {
  return ['start', '--data-dir', dataDir, '--gateway-port', String(gatewayPort), '--port', String(platformPort)];
}

const env = (extra: Record<string, string> = {}) => plainEnv({ INITIAL_API_KEY: KEY, LOCAL_MODELS_WARMUP: 'off', ...extra });

async function api(base: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const json = (await res.json()) as any;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data;
}

describe('operator mistakes', () => {
  it('a second kbchat start (or worker) on one data dir is refused at once, naming the first; after a kill -9 the next start runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-two-starts-'));
    const ports = await freePorts();
    const first = await startKbchat(startArgs(dataDir, ports), env());
    children.push(first.child);
    const platform = `http://127.0.0.1:${ports[1]}`;
    await api(platform, '/api/core/dataset/create', { name: 'made on the first' });

    const second = await runKbchat(startArgs(dataDir, await freePorts()), env());
    expect(second.code).toBe(1);
    expect(second.out).toContain(`the embedded store ${join(dataDir, 'gateway-db')} is in use by process ${first.child.pid} (`);
    expect(second.out).toMatch(/kbchat\.js start --data-dir .*, started \d{4}-/);
    expect(second.out).not.toMatch(/listening on|root user created/);
    expect(second.ms).toBeLessThan(10_000);
    const worker = await runKbchat(['worker', '--data-dir', dataDir], env());
    expect(worker.code).toBe(1);
    expect(worker.out).toContain(`the embedded store ${join(dataDir, 'platform-db')} is in use by process ${first.child.pid}`);

    first.child.kill('SIGKILL');
    await exited(first.child);
    const again = await startKbchat(startArgs(dataDir, ports), env());
    children.push(again.child);
    const list = await api(platform, '/api/core/dataset/list');
    expect(list.map((d: any) => d.name)).toEqual(['made on the first']);
    expect(await stop(again.child)).toBe(0);
    expect(existsSync(join(dataDir, 'gateway-db.lock')) || existsSync(join(dataDir, 'platform-db.lock'))).toBe(false);
  }, 240_000);

  it('a port in use, or a broken config.json, stops the start before anything is created', async () => {
    const ports = await freePorts();
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(ports[1], '127.0.0.1', resolve));

    const dataDir = join(mkdtempSync(join(tmpdir(), 'kbchat-refused-')), 'data');
    const busy = await runKbchat(startArgs(dataDir, ports), env());
    expect(busy.code).toBe(1);
    expect(busy.out).toContain(`port ${ports[1]} on 127.0.0.1, the platform's port (PORT, --port), is already in use`);

    const dir = mkdtempSync(join(tmpdir(), 'kbchat-config-'));
    writeFileSync(join(dir, 'bad.json'), '{"llmModels": [');
    writeFileSync(join(dir, 'null.json'), JSON.stringify({ llmModels: [{ model: 'local-extractive', defaultConfig: null }] }));
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.json'), /CONFIG_PATH .*missing\.json cannot be read/],
      [join(dir, 'bad.json'), /bad\.json is not JSON/],
      [join(dir, 'null.json'), /llmModels\[0\]\.defaultConfig: must be an object: use \{\} for an empty one/],
    ];
    for (const [configPath, message] of cases) {
      const run = await runKbchat(startArgs(dataDir, await freePorts()), env({ CONFIG_PATH: configPath }));
      expect(run.code).toBe(1);
      expect(run.out).toMatch(message);
      expect(run.out).not.toMatch(/listening on/);
    }
    // Nothing was created: no store, no root user whose password nobody saw, no token file.
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);

  it('npx kbchat start with a FastGPT config.json (one warning), then SIGTERM to npm: kbchat shuts down cleanly instead of serving on, orphaned', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-npx-'));
    const ports = await freePorts();
    const fastgpt = {
      feConfigs: { lafEnv: 'https://laf.dev' },
      systemEnv: { vectorMaxProcess: 2, qaMaxProcess: 1 },
      llmModels: [{ model: 'local-extractive', name: 'local', avatar: '/imgs/model/openai.svg', charsPointsPrice: 0 }],
      vectorModels: [{ model: 'local-embed', defaultToken: 100, maxToken: 128, dbConfig: {}, queryConfig: {} }],
      reRankModels: [],
      audioSpeechModels: [{ model: 'tts-1', name: 'OpenAI TTS1', voices: [] }],
      whisperModel: { model: 'whisper-1', name: 'Whisper1' },
    };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(fastgpt));
    const npx = await startUntil(
      'npx',
      ['--no-install', 'kbchat', ...startArgs(dataDir, ports)],
      env({ CONFIG_PATH: join(dataDir, 'config.json') }),
      /\[platform\] listening on/,
    );
    children.push(npx.child);
    const warnings = npx
      .out()
      .split('\n')
      .filter((l) => /FastGPT/.test(l));
    expect(warnings).toEqual([
      `[platform] warning: ${join(dataDir, 'config.json')}: feConfigs, audioSpeechModels, whisperModel are FastGPT settings that kbchat does not use: ignored`,
    ]);
    // kbchat itself, below npm and sh: killed at the end should the test fail, not left serving.
    const lock = join(dataDir, 'platform-db.lock');
    orphans.push({ pid: (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid, lock });
    npx.child.kill('SIGTERM');
    // The locks go only when kbchat closes its stores: a clean shutdown, not a kill.
    const locks = () => readdirSync(dataDir).filter((f) => f.endsWith('.lock'));
    const until = Date.now() + 20_000;
    while (locks().length && Date.now() < until) await sleep(100);
    expect(locks()).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${ports[1]}/healthz`)).rejects.toThrow();
  }, 120_000);
});
