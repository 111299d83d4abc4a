// A real provider without a config.json: with OPENAI_API_KEY set, `kbchat
// start` offers the models of the gateway's OpenAI channel (its default list)
// beside the local ones, and new datasets and apps can use them. Nothing is
// sent to the provider at start: its base URL here answers nothing.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, plainEnv, startKbchat, stop } from './helpers.js';

const KEY = 'kbchat-cli-provider-key-0123456789';
let running: ChildProcess | undefined;
afterEach(() => running?.kill('SIGKILL'));

describe('kbchat start with a provider key', () => {
  it("offers the provider channel's models without a config.json, ahead of the local ones", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-provider-'));
    const [gatewayPort, platformPort] = await freePorts();
    const env = plainEnv({
      INITIAL_API_KEY: KEY,
      LOCAL_MODELS_WARMUP: 'off',
      OPENAI_API_KEY: 'sk-never-sent-0123456789',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    const s = await startKbchat(['start', '--data-dir', dataDir, '--gateway-port', String(gatewayPort), '--port', String(platformPort)], env);
    running = s.child;
    expect(s.out()).toContain("[platform] models of the gateway's provider channels, offered with default limits: gpt-4o-mini, gpt-4o,");
    expect(s.out()).toMatch(/all \d+ configured models are served by the gateway/);

    const platform = `http://127.0.0.1:${platformPort}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${platform}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.json()) as any;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json.data;
    };
    const datasetId = await call('POST', '/api/core/dataset/create', { name: 'on openai' });
    expect((await call('GET', `/api/core/dataset/detail?id=${datasetId}`)).vectorModel.model).toBe('text-embedding-3-small');
    await call('POST', '/api/core/app/create', { name: 'gpt app', model: 'gpt-4o-mini', datasets: [datasetId] });
    await call('POST', '/api/core/app/create', { name: 'local app', model: 'local-extractive', datasets: [] });
    expect(await stop(s.child)).toBe(0);
    running = undefined;
  }, 120_000);
});
