// Oversized chat bodies against `kbchat platform` as an operator runs it: an
// OS process of its own (the built CLI), whose resident memory is read from
// /proc before and after 60 MB and 12 MB bodies, and whose log is read for
// the capped body of a failed model call.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { LOGGED_BODY_CHARS } from '../src/gateway-client/index.js';
import { sendLarge } from './fixtures/large-body.js';

const REPO = resolve(import.meta.dirname, '../../..');
const KEY = 'kbchat-test-oversized-key-0123456789';
const MB = 1024 * 1024;

/** Resident memory of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return Math.round(kb / 1024);
}

describe.skipIf(process.platform !== 'linux')('oversized chat bodies against a platform process', () => {
  let gw: TestGateway;
  let child: ChildProcess;
  let out = '';
  let url: string;
  const call = async (path: string, json: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    return (await res.json()) as any;
  };
  const appKey = async (model: string) => {
    const appId = (await call('/api/core/app/create', { name: model, model })).data;
    return (await call('/api/support/openapi/create', { appId })).data as string;
  };
  const chat = (key: string, body: string) =>
    fetch(`${url}/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });

  beforeAll(async () => {
    // The CLI runs from dist/: bring it up to date with the sources (a no-op when it is).
    try {
      execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-b', 'packages/cli'], { cwd: REPO, stdio: 'pipe' });
    } catch (err) {
      console.warn(`tsc -b packages/cli failed; testing the dist/ there is:\n${(err as { stdout?: Buffer }).stdout?.toString().slice(0, 2000)}`);
    }
    gw = await startTestGateway();
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-oversized-'));
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ llmModels: [{ model: 'sim-chat' }, { model: 'sim-500' }], vectorModels: [{ model: 'sim-embed-384' }] }),
    );
    child = spawn(process.execPath, [join(REPO, 'packages/cli/bin/kbchat.js'), 'platform'], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: '0',
        DATA_DIR: dir,
        CONFIG_PATH: join(dir, 'config.json'),
        GATEWAY_URL: gw.url,
        GATEWAY_TOKEN: ROOT_TOKEN,
        INITIAL_API_KEY: KEY,
        LOG_LEVEL: 'warn',
        PLATFORM_WORKER: 'off',
        PUBLIC_DIR: dir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kbchat platform not ready:\n${out}`)), 60_000);
      const check = () => {
        const m = /\[platform\] listening on (\S+)/.exec(out);
        if (m) (clearTimeout(timer), resolve(m[1]!));
      };
      child.stdout!.on('data', check);
      child.on('exit', (code) => reject(new Error(`kbchat platform exited with ${code}:\n${out}`)));
    });
  }, 120_000);
  afterAll(async () => {
    child?.kill('SIGKILL');
    await gw?.close();
  });

  it('keeps its resident memory through 60 MB and 12 MB bodies', async () => {
    const key = await appKey('sim-chat');
    const ask = (content: unknown) => JSON.stringify({ messages: [{ role: 'user', content }] });
    const image = `data:image/png;base64,${'A'.repeat(12 * MB)}`;
    // 60 MB announced: refused on its Content-Length; chunked: refused at the byte past 20 MB (what follows is never read, so not sent).
    const sixty = async () => [
      (await sendLarge(url, { path: '/api/v1/chat/completions', key, contentLength: 60 * MB, sendBytes: 0 })).status,
      (await sendLarge(url, { path: '/api/v1/chat/completions', key, sendBytes: 20 * MB + 1 })).status,
    ];
    const twelve = async () => [
      // 12 MB of question: refused before any model call.
      (await chat(key, ask('why '.repeat(3 * MB)))).status,
      // 12 MB of image beside a short question: read, the image left out, answered.
      (
        await chat(
          key,
          ask([
            { type: 'image_url', image_url: { url: image } },
            { type: 'text', text: 'what is this?' },
          ]),
        )
      ).status,
    ];
    // A first round warms up what any first request allocates; then the baseline.
    expect([...(await sixty()), ...(await twelve())]).toEqual([413, 413, 400, 200]);
    const before = rssMb(child.pid!);
    const afterSixty: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect(await sixty()).toEqual([413, 413]);
      afterSixty.push(rssMb(child.pid!));
    }
    const afterTwelve: number[] = [];
    for (let i = 0; i < 8; i++) {
      expect(await twelve()).toEqual([400, 200]);
      afterTwelve.push(rssMb(child.pid!));
    }
    console.log(
      `platform RSS (MB): ${before} before; after each 60 MB pair (declared, chunked) ${afterSixty.join(', ')}; after each 12 MB pair (question, image) ${afterTwelve.join(', ')}`,
    );
    // A 60 MB body is refused on its Content-Length, or once 20 MB of it have come: at most that is held, and let go.
    expect(Math.max(...afterSixty) - before).toBeLessThan(32);
    // A 12 MB body is read, decoded and parsed: a few copies of it live while it is handled, until the
    // heap next needs room (a sawtooth of +50 to +150 MB here, which does not climb from round to round).
    expect(Math.max(...afterTwelve) - before).toBeLessThan(256);
  }, 120_000);

  it('logs a failed model call with its body capped', async () => {
    const key = await appKey('sim-500');
    const question = 'why does the glacier move '.repeat(2000);
    expect((await chat(key, JSON.stringify({ messages: [{ role: 'user', content: question }] }))).status).toBe(500);
    await new Promise((r) => setTimeout(r, 200));
    const line = out
      .split('\n')
      .filter((l) => l.includes('chat: the answer model call failed'))
      .map((l) => JSON.parse(l))
      .at(-1);
    expect(line).toMatchObject({ level: 40, step: 'answer', status: 500, gatewayRequestId: expect.any(String), requestBodyChars: expect.any(Number) });
    expect(line.requestBodyChars).toBeGreaterThan(question.length);
    expect(line.requestBody.length).toBeLessThan(LOGGED_BODY_CHARS + 200);
    expect(line.requestBody).toContain(`the gateway's request log keeps it under ${line.gatewayRequestId}`);
  });
});
