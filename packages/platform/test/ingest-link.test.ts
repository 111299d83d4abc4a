import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError, fetchLink, forbiddenAddressReason, type FetchLinkOptions, type HostResolver } from '../src/ingest/index.js';
import { buildPdf } from './ingest-fixtures.js';

// Every request any test makes lands here (only on 127.0.0.1): the tests can
// check that a refused link never reached the server at all.
let server: Server;
let port: number;
const hits: { url: string; host: string }[] = [];

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  hits.push({ url: url.pathname, host: req.headers.host ?? '' });
  const redirect = /^\/r\/(\d+)$/.exec(url.pathname);
  if (redirect) {
    const n = Number(redirect[1]);
    res.writeHead(302, { location: n > 0 ? `/r/${n - 1}` : '/page' }).end();
    return;
  }
  switch (url.pathname) {
    case '/page':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><head><title>Local page</title></head><body><nav>menu</nav><h1>Hello</h1><p>Body text.</p></body></html>');
      return;
    case '/plain':
      res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x23, 0x20, 0x78]));
      return;
    case '/notes.md':
      res.writeHead(200, { 'content-type': 'text/plain' }).end('# Notes\n\n- item');
      return;
    case '/doc.pdf':
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(buildPdf([[[72, 700, 'PDF over HTTP.']]]));
      return;
    case '/untyped':
      res.end(Buffer.from('<!doctype html><p>sniffed</p>')); // no content-type at all
      return;
    case '/image':
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(10));
      return;
    case '/gzip':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('compressed text'));
      return;
    case '/big-declared':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(2_000_000) });
      res.end('x'.repeat(2_000_000));
      return;
    case '/big-chunked': {
      res.writeHead(200, { 'content-type': 'text/plain' }); // chunked: no length up front
      let sent = 0;
      const pump = () => {
        while (sent < 3_000_000) {
          sent += 64 * 1024;
          if (!res.write('y'.repeat(64 * 1024))) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
      return;
    }
    case '/slow':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial'); // never ends (closed when the server closes)
      return;
    case '/to-internal':
      res.writeHead(301, { location: `http://other.internal:${port}/page` }).end();
      return;
    case '/to-metadata':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    case '/to-file':
      res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      return;
    default:
      res.writeHead(404).end('nope');
  }
}

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = (path: string) => `http://127.0.0.1:${port}${path}`;
const open: FetchLinkOptions = { allowPrivate: true };
/** A resolver that answers like DNS would for names that do not exist offline. */
const fakeDns =
  (table: Record<string, string[]>, calls: string[] = []): HostResolver =>
  async (hostname) => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

async function failure(link: string, opts?: FetchLinkOptions): Promise<IngestError> {
  try {
    await fetchLink(link, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error(`expected ${link} to fail`);
}

describe('address policy', () => {
  it('classifies private, loopback, link-local, CGNAT, multicast and embedded IPv4 forms', () => {
    const refused = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1%eth0',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::10.0.0.1',
      '2002:c0a8:0101::1',
    ];
    for (const a of refused) expect(forbiddenAddressReason(a), a).toBeDefined();
    for (const a of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(forbiddenAddressReason(a), a).toBeUndefined();
    }
    expect(forbiddenAddressReason('169.254.169.254')).toMatch(/metadata/);
  });

  it('judges every IPv6 form that carries an IPv4 address by the IPv4 address inside', () => {
    const refused: [string, RegExp][] = [
      ['::ffff:0:7f00:1', /loopback/], // IPv4-translated (::ffff:0:0:0/96)
      ['::ffff:0:10.0.0.1', /private/],
      ['::127.0.0.1', /loopback/], // IPv4-compatible (::/96)
      ['64:ff9b::a9fe:a9fe', /metadata/], // NAT64, well-known prefix
      ['64:ff9b:1::7f00:1', /loopback/], // local-use NAT64 with a /96 prefix
      ['64:ff9b:1:a00:0:100::', /private/], // ... with a /48 prefix (10.0.0.1)
      ['64:ff9b:1:0:7f:0:100:0', /loopback/], // ... with a /64 prefix (127.0.0.1; its last 32 bits read 1.0.0.0)
      ['2002:7f00:1::', /loopback/], // 6to4
      ['2001:0:7f00:1::1', /loopback/], // Teredo: the server's address
      ['2001:0:4136:e378:8000:63bf:f5ff:fffe', /private/], // Teredo: the client's address, bits inverted (10.0.0.1)
    ];
    for (const [address, reason] of refused) expect(forbiddenAddressReason(address), address).toMatch(reason);
    const allowed = ['::ffff:0:808:808', '::8.8.8.8', '64:ff9b::8.8.8.8', '64:ff9b:1::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'];
    for (const address of allowed) expect(forbiddenAddressReason(address), address).toBeUndefined();
  });
});

describe('fetchLink', () => {
  it('refuses loopback by default, before any request is sent', async () => {
    const before = hits.length;
    for (const link of [
      local('/page'),
      `http://localhost:${port}/page`,
      `http://[::ffff:127.0.0.1]:${port}/page`,
      `http://[::ffff:0:7f00:1]:${port}/page`,
      `http://0x7f.1:${port}/page`,
    ]) {
      const err = await failure(link);
      expect(err).toMatchObject({ code: 'link_forbidden_address', status: 400 });
      expect(err.message).toMatch(/loopback/);
      expect(err.message).toContain('LINK_ALLOW_PRIVATE');
    }
    expect((await failure('http://169.254.169.254/latest/meta-data/')).message).toMatch(/169\.254\.169\.254.*link-local/);
    expect(hits.length).toBe(before);
  });

  it('fetches a local page when private addresses are allowed', async () => {
    const r = await fetchLink(local('/page'), open);
    expect(r).toEqual({ url: local('/page'), contentType: 'text/html; charset=utf-8', format: 'html', title: 'Local page', text: '# Hello\n\nBody text.' });
  });

  it('refuses a public-looking name that resolves to loopback, and connects to exactly the checked address', async () => {
    const before = hits.length;
    const err = await failure(`http://docs.example.com:${port}/page`, { resolve: fakeDns({ 'docs.example.com': ['127.0.0.1'] }) });
    expect(err.code).toBe('link_forbidden_address');
    expect(err.message).toContain('docs.example.com (127.0.0.1)');
    // One refused address beside a public one refuses the whole name (any of them could be dialled).
    // Loopback comes first so that even a broken guard would dial only this machine.
    const mixed = await failure(`http://mixed.example.com:${port}/`, { resolve: fakeDns({ 'mixed.example.com': ['127.0.0.1', '93.184.216.34'] }) });
    expect(mixed.message).toMatch(/\(127\.0\.0\.1\), a loopback address/);
    expect(hits.length).toBe(before);

    // Allowed: the socket goes to the resolver's answer while the Host header keeps the name.
    const calls: string[] = [];
    const r = await fetchLink(`http://docs.example.com:${port}/page`, { allowPrivate: true, resolve: fakeDns({ 'docs.example.com': ['127.0.0.1'] }, calls) });
    expect(r.text).toContain('Body text.');
    expect(calls).toEqual(['docs.example.com']);
    expect(hits.at(-1)).toEqual({ url: '/page', host: `docs.example.com:${port}` });
  });

  it('re-checks every redirect hop', async () => {
    const resolve = fakeDns({ 'wiki.internal': ['127.0.0.1'], 'other.internal': ['127.0.0.1'] });
    const opts = { resolve, privateHostAllowList: ['wiki.internal'] };
    expect((await fetchLink(`http://wiki.internal:${port}/page`, opts)).title).toBe('Local page');
    const toOther = await failure(`http://wiki.internal:${port}/to-internal`, opts);
    expect(toOther.code).toBe('link_forbidden_address');
    expect(toOther.message).toContain('other.internal');
    expect((await failure(`http://wiki.internal:${port}/to-metadata`, opts)).code).toBe('link_forbidden_address');
    expect((await failure(local('/to-file'), open)).code).toBe('link_invalid_url');
  });

  it('follows at most maxRedirects redirects', async () => {
    expect((await fetchLink(local('/r/2'), open)).url).toBe(local('/page')); // 3 hops with the default limit of 3
    const err = await failure(local('/r/3'), open);
    expect(err).toMatchObject({ code: 'link_too_many_redirects', status: 422 });
    expect((await failure(local('/r/1'), { ...open, maxRedirects: 1 })).code).toBe('link_too_many_redirects');
  });

  it('caps the body size whether or not the length is declared', async () => {
    for (const path of ['/big-declared', '/big-chunked']) {
      const err = await failure(local(path), { ...open, maxBytes: 1_000_000 });
      expect(err).toMatchObject({ code: 'link_too_large', status: 413 });
      expect(err.message).toContain(path);
    }
  });

  it('reads by content type', async () => {
    expect(await fetchLink(local('/plain'), open)).toMatchObject({ format: 'txt', text: 'café # x' });
    expect(await fetchLink(local('/notes.md'), open)).toMatchObject({ format: 'md', text: '# Notes\n\n- item' });
    expect(await fetchLink(local('/doc.pdf'), open)).toMatchObject({ format: 'pdf', text: 'PDF over HTTP.' });
    expect(await fetchLink(local('/untyped'), open)).toMatchObject({ format: 'html', text: 'sniffed' });
    expect(await fetchLink(local('/gzip'), open)).toMatchObject({ text: 'compressed text' });
    const image = await failure(local('/image'), open);
    expect(image).toMatchObject({ code: 'link_unsupported_content', status: 422 });
    expect(image.message).toContain('image/png');
  });

  it('reports bad URLs, bad statuses, timeouts and unreachable hosts distinctly', async () => {
    expect((await failure('ftp://example.com/file')).code).toBe('link_invalid_url');
    expect((await failure('not a url')).code).toBe('link_invalid_url');
    const missing = await failure(local('/missing'), open);
    expect(missing).toMatchObject({ code: 'link_bad_status', status: 502 });
    expect(missing.message).toContain('HTTP 404');
    const t0 = Date.now();
    expect((await failure(local('/slow'), { ...open, timeoutMs: 300 })).code).toBe('link_timeout');
    expect(Date.now() - t0).toBeLessThan(5000);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect((await failure(`http://127.0.0.1:${closedPort}/`, open)).code).toBe('link_unreachable');
    expect((await failure('http://nowhere.invalid/', { resolve: fakeDns({}) })).code).toBe('link_unreachable');
  });
});
