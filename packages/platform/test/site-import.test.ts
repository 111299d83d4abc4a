// A website imported from a start address (issue 29): its own pages, robots.txt
// honoured, the sitemap's pages taken, to a depth and a number of pages, each
// page a link collection; the link rules for private addresses apply. The site
// is served here over HTTP; models are the upstream simulator behind a real
// gateway; the store is PGlite.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { pageLinks, sitemapEntries } from '../src/ingest/index.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-site-import-key-012345';

/** A small site: each page a title, a paragraph and links. */
function site(other: string): Record<string, { title: string; text: string; links: string[] } | string> {
  return {
    '/': {
      title: 'Harbour home',
      text: 'Welcome to the harbour of Norrby.',
      links: ['/berths', '/fuel#prices', '/private/ledger', `${other}/elsewhere`, 'mailto:office@example.org'],
    },
    '/berths': { title: 'Berths', text: 'Berth B7 is kept for the lifeboat.', links: ['/berths/winter', '/'] },
    '/berths/winter': { title: 'Winter berths', text: 'In winter the boats go up on the slipway.', links: ['/berths/winter/cradles'] },
    '/berths/winter/cradles': { title: 'Cradles', text: 'Cradles are lent by the boat club.', links: [] },
    '/fuel': { title: 'Fuel', text: 'Diesel costs 19.90 a litre for guests.', links: [] },
    '/private/ledger': { title: 'Ledger', text: 'Not for crawlers.', links: [] },
    '/orphan': { title: 'Tide tables', text: 'The tide table is posted on Mondays.', links: [] },
    '/robots.txt': 'User-agent: *\nDisallow: /private/\n',
    '/sitemap.xml':
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>ORIGIN/orphan</loc></url><url><loc>https://elsewhere.example/x</loc></url></urlset>',
  };
}

describe('websites imported', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let strict: RunningPlatform;
  let server: Server;
  let origin = '';
  const fetched: string[] = [];
  const call = async (platform: RunningPlatform, path: string, json?: unknown) => {
    const res = await fetch(`${platform.url}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      fetched.push(path);
      const entry = site('http://other.invalid')[path];
      if (!entry) return void res.writeHead(404).end('not found');
      if (typeof entry === 'string') {
        res.writeHead(200, { 'content-type': path.endsWith('.xml') ? 'application/xml' : 'text/plain' });
        return void res.end(entry.replace('ORIGIN', origin));
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${entry.title}</title><main><p>${entry.text}</p>${entry.links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startTestGateway();
    const start = async (allowPrivate: boolean) => {
      const dir = mkdtempSync(join(tmpdir(), 'kbchat-site-'));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [{ model: 'sim-embed-384' }] }));
      return startPlatform(
        loadPlatformConfig(
          { INITIAL_API_KEY: KEY },
          {
            host: '127.0.0.1',
            port: 0,
            dataDir: dir,
            databaseUrl: 'pglite:memory',
            configPath: join(dir, 'config.json'),
            gatewayUrl: gw.url,
            gatewayToken: ROOT_TOKEN,
            linkAllowPrivate: allowPrivate,
          },
        ),
      );
    };
    p = await start(true);
    strict = await start(false);
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await strict?.close();
    await gw?.close();
    server?.close();
  });

  it('reads links and sitemaps as written', () => {
    const links = pageLinks(
      '<base href="/docs/"><a href="a">a</a><a href="mailto:x@y">m</a><a rel="nofollow" href="/n">n</a><a href="https://x.org/b#c">b</a>',
      'http://h.test/index',
    );
    expect(links.map((u) => u.href)).toEqual(['http://h.test/docs/a', 'https://x.org/b#c']);
    expect(sitemapEntries('<sitemapindex><sitemap><loc> http://h.test/s1.xml </loc></sitemap></sitemapindex>')).toEqual({
      index: true,
      locs: ['http://h.test/s1.xml'],
    });
  });

  it('imports the site’s own pages to the depth asked, with the sitemap’s, never what robots.txt forbids', async () => {
    const datasetId = (await call(p, '/api/core/dataset/create', { name: 'harbour site', vectorModel: 'sim-embed-384' })).body.data;
    fetched.length = 0;
    const r = await call(p, '/api/core/dataset/collection/create/website', { datasetId, url: `${origin}/`, maxDepth: 2, maxPages: 20 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const urls = r.body.data.collections.map((c: any) => new URL(c.url).pathname).sort();
    expect(urls).toEqual(['/', '/berths', '/berths/winter', '/fuel', '/orphan']);
    expect(r.body.data.collections.find((c: any) => c.url.endsWith('/fuel'))).toMatchObject({ name: 'Fuel', insertLen: 1 });
    // Depth 3 is not read; robots.txt's /private/ is never fetched; the other site is never asked.
    expect(fetched).not.toContain('/berths/winter/cradles');
    expect(fetched).not.toContain('/private/ledger');
    expect(fetched.filter((f) => f === '/fuel')).toHaveLength(1);
    const list = (await call(p, '/api/core/dataset/collection/listV2', { datasetId, offset: 0, pageSize: 50 })).body.data.list;
    expect(list).toHaveLength(5);
    expect(list.every((c: any) => c.type === 'link' && c.rawLink.startsWith(origin))).toBe(true);

    // Again: the pages it has are skipped, named, so that a sync updates them.
    const again = await call(p, '/api/core/dataset/collection/create/website', { datasetId, url: `${origin}/`, maxDepth: 0, maxPages: 1 });
    expect(again.body.data).toMatchObject({
      collections: [],
      skipped: [{ url: `${origin}/`, reason: expect.stringMatching(/already in this knowledge base.*sync it/) }],
    });
  });

  it('stops at the page limit', async () => {
    const datasetId = (await call(p, '/api/core/dataset/create', { name: 'limited', vectorModel: 'sim-embed-384' })).body.data;
    const r = await call(p, '/api/core/dataset/collection/create/website', { datasetId, url: `${origin}/`, maxDepth: 5, maxPages: 2 });
    expect(r.body.data.collections).toHaveLength(2);
  });

  it('refuses a start the link rules or robots.txt forbid, and bad limits, by name', async () => {
    const datasetId = (await call(strict, '/api/core/dataset/create', { name: 'strict', vectorModel: 'sim-embed-384' })).body.data;
    const privateStart = await call(strict, '/api/core/dataset/collection/create/website', { datasetId, url: `${origin}/` });
    expect(privateStart.status).toBe(400);
    expect(privateStart.body.statusText).toBe('link_forbidden_address');
    const other = (await call(p, '/api/core/dataset/create', { name: 'robots', vectorModel: 'sim-embed-384' })).body.data;
    const forbidden = await call(p, '/api/core/dataset/collection/create/website', { datasetId: other, url: `${origin}/private/ledger` });
    expect(forbidden.status).toBe(422);
    expect(forbidden.body.message).toMatch(/robots\.txt does not allow kbchat/);
    const tooMany = await call(p, '/api/core/dataset/collection/create/website', { datasetId: other, url: `${origin}/`, maxPages: 1000 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toMatch(/maxPages/);
    expect((await call(p, '/api/core/dataset/collection/create/website', { datasetId: other, url: 'ftp://x/' })).status).toBe(400);
  });
});
