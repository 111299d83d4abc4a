// A platform over HTTP in front of a real gateway (itself in front of the
// upstream simulator), signed in as root: what the end-to-end API tests need.
// `restart()` stops the platform and starts it again on the same data.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import type { PlatformConfig } from '../src/config.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

export interface PlatformFixture {
  gw: TestGateway;
  p: RunningPlatform;
  dir: string;
  key: string;
  /** An API call with the general key (or another key; null for none: a share link's visitor). */
  call(path: string, opts?: { json?: unknown; method?: string; key?: string | null }): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  /** The gateway's request log since `from` (epoch ms), oldest first. */
  gatewayLogs(from: number): Promise<{ model: string; request_id: string; status: number }[]>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startPlatformFixture(opts: {
  key: string;
  models: string[];
  config: { llmModels: { model: string }[]; vectorModels: { model: string }[] };
  /** On disk in its data folder (for restarts); in memory by default. */
  onDisk?: boolean;
  /** Settings beyond these (SHARE_HOOK_ALLOW_PRIVATE's, a web folder, ...). */
  overrides?: Partial<PlatformConfig>;
}): Promise<PlatformFixture> {
  const gw = await startTestGateway({ models: opts.models });
  const dir = mkdtempSync(join(tmpdir(), 'kbchat-platform-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(opts.config));
  const start = () =>
    startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: opts.key },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: dir,
          databaseUrl: opts.onDisk ? undefined : 'pglite:memory',
          configPath: join(dir, 'config.json'),
          gatewayUrl: gw.url,
          gatewayToken: ROOT_TOKEN,
          ...opts.overrides,
        },
      ),
      () => {},
    );
  const fixture: PlatformFixture = {
    gw,
    p: await start(),
    dir,
    key: opts.key,
    async call(path, o = {}) {
      const key = o.key === undefined ? opts.key : o.key;
      const headers: Record<string, string> = o.json === undefined ? {} : { 'content-type': 'application/json' };
      if (key) headers.authorization = `Bearer ${key}`;
      const res = await fetch(`${fixture.p.url}${path}`, {
        method: o.method ?? (o.json === undefined ? 'GET' : 'POST'),
        headers,
        body: o.json === undefined ? undefined : JSON.stringify(o.json),
      });
      // Read as bytes: Response.text() would drop a byte-order mark, which the CSV tests look for.
      const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: res.status, body, text, headers: res.headers };
    },
    async gatewayLogs(from) {
      // The gateway writes its log in batches (logFlushMs 20 in tests).
      await new Promise((r) => setTimeout(r, 150));
      const rows = ((await (await gw.api(`/api/logs?from=${from}&limit=500`)).json()) as any).data as any[];
      return rows.reverse();
    },
    async restart() {
      await fixture.p.close();
      fixture.p = await start();
    },
    async close() {
      await fixture.p?.close();
      await gw.close();
    },
  };
  return fixture;
}
