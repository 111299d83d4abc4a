// Fetches a web page (or a linked PDF, DOCX, text file) for a knowledge base.
//
// Guard against SSRF: every address a hostname resolves to is checked inside
// the connection's own DNS lookup hook, so the address that was checked is the
// address connected to (a second, different DNS answer — "DNS rebinding" —
// never gets a socket). IP-literal URLs skip DNS and are checked up front.
// Redirects are followed by hand, each hop checked again; the body is capped and
// the whole fetch has one deadline.

import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { IngestError, findIngestError } from './errors.js';
import { forbiddenAddressReason } from './link-address.js';
import { detectFormat, readDocument, type DocumentFormat } from './readers/index.js';

export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export interface FetchLinkOptions {
  /** Allow loopback / private / link-local targets (env LINK_ALLOW_PRIVATE=true). Default false. */
  allowPrivate?: boolean;
  /** Hostnames that may resolve to private addresses even without allowPrivate (an internal wiki). */
  privateHostAllowList?: string[];
  /** Redirects followed at most (default 3). */
  maxRedirects?: number;
  /** Largest body accepted, in bytes, after decompression (default 5 MB). */
  maxBytes?: number;
  /** Deadline for the whole fetch including redirects and the body (default 15 s). */
  timeoutMs?: number;
  /** DNS resolution (default: `dns.lookup` with `all: true`); tests inject one. */
  resolve?: HostResolver;
  userAgent?: string;
  /** A POST with this JSON body (a share link's hook), in place of a GET. */
  postJson?: string;
}

export interface FetchLinkResult {
  /** The URL the content came from, after redirects. */
  url: string;
  contentType: string;
  format: DocumentFormat;
  title?: string;
  text: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const FORMAT_BY_TYPE: Record<string, DocumentFormat> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/plain': 'txt',
  'application/json': 'txt',
  'text/csv': 'csv',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
};

const defaultResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

function parseLink(link: string): URL {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new IngestError('link_invalid_url', `${link} is not a valid URL; give an absolute http:// or https:// address.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new IngestError('link_invalid_url', `${link}: only http:// and https:// links can be fetched, not ${url.protocol}`);
  }
  return url;
}

function refuse(link: string, host: string, address: string, reason: string): IngestError {
  const shown = host === address ? address : `${host} (${address})`;
  return new IngestError(
    'link_forbidden_address',
    `${link} points to ${shown}, a ${reason} address; fetching it is not allowed. An operator can allow private addresses with LINK_ALLOW_PRIVATE=true.`,
  );
}

/** The lookup hook of every connection the fetcher opens: resolve, check, connect to exactly what was checked. */
function guardedLookup(resolve: HostResolver, allowPrivate: (hostname: string) => boolean, currentLink: () => string) {
  return (hostname: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw new IngestError('link_unreachable', `${currentLink()}: ${hostname} has no address.`);
        if (!allowPrivate(hostname)) {
          for (const a of addresses) {
            const reason = forbiddenAddressReason(a.address);
            if (reason) throw refuse(currentLink(), hostname, a.address, reason);
          }
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })
      .catch((err: unknown) => {
        const e =
          err instanceof IngestError
            ? err
            : new IngestError('link_unreachable', `${currentLink()}: cannot resolve ${hostname} (${(err as Error)?.message ?? err}).`, { cause: err });
        callback(e, '');
      });
  };
}

/**
 * An agent whose every connection passes fetchRaw's address checks, for other
 * callers of addresses a user gives (tool sources). An IP-literal URL skips DNS,
 * so its caller checks it first with literalAddressRefusal.
 */
export function guardedAgent(opts: {
  allowPrivate: boolean;
  resolve?: HostResolver;
  currentLink: () => string;
  timeoutMs: number;
  bodyTimeoutMs?: number;
}): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(opts.resolve ?? defaultResolver, () => opts.allowPrivate, opts.currentLink), timeout: opts.timeoutMs },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.bodyTimeoutMs ?? opts.timeoutMs,
  });
}

/** The refusal of a URL whose host is a private IP address (none for a name: guardedAgent checks what it resolves to). */
export function literalAddressRefusal(url: URL, allowPrivate: boolean): IngestError | undefined {
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate || !isIP(literal)) return undefined;
  const reason = forbiddenAddressReason(literal);
  return reason ? refuse(url.href, literal, literal, reason) : undefined;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readCapped(body: AsyncIterable<Uint8Array> & { destroy(err?: Error): unknown }, maxBytes: number, link: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw tooLarge(link, maxBytes);
    }
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

function tooLarge(link: string, maxBytes: number): IngestError {
  return new IngestError('link_too_large', `${link} is larger than ${(maxBytes / 1e6).toFixed(1)} MB; the limit for links is ${maxBytes} bytes.`);
}

function decompress(raw: Buffer, encoding: string | undefined, maxBytes: number, link: string): Buffer {
  const enc = (encoding ?? '').trim().toLowerCase();
  if (!enc || enc === 'identity') return raw;
  try {
    const opts = { maxOutputLength: maxBytes };
    if (enc === 'gzip' || enc === 'x-gzip') return gunzipSync(raw, opts);
    if (enc === 'deflate') return inflateSync(raw, opts);
    if (enc === 'br') return brotliDecompressSync(raw, opts);
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLarge(link, maxBytes);
    throw new IngestError('link_unreachable', `${link}: the ${enc} body could not be decompressed.`, { cause: err });
  }
  throw new IngestError('link_unsupported_content', `${link}: content encoding ${enc} is not supported.`);
}

/** Fetches a link and returns its text as markdown-ish text. Every failure is an IngestError. */
export async function fetchLink(link: string, opts: FetchLinkOptions = {}): Promise<FetchLinkResult> {
  return readRawLink(await fetchRaw(link, opts));
}

/** A fetched link's content read as fetchLink reads it. */
export async function readRawLink({ url, contentType, data }: RawLink): Promise<FetchLinkResult> {
  return { url, contentType, ...(await readBody(data, contentType, new URL(url))) };
}

/** What a link answered, read no further: for what is not a document (robots.txt, a sitemap, a page's links). */
export interface RawLink {
  /** The URL the content came from, after redirects. */
  url: string;
  contentType: string;
  data: Buffer;
}

/** Fetches a link (or POSTs to it) with the same rules as fetchLink (addresses, redirects, size, deadline); every failure is an IngestError. */
export async function fetchRaw(link: string, opts: FetchLinkOptions = {}): Promise<RawLink> {
  const allowList = new Set((opts.privateHostAllowList ?? []).map((h) => h.toLowerCase()));
  const allowPrivate = (hostname: string) => opts.allowPrivate === true || allowList.has(hostname.toLowerCase());
  const maxRedirects = opts.maxRedirects ?? 3;
  const maxBytes = opts.maxBytes ?? 5_000_000;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let url = parseLink(link);
  let current = url.href;
  const agent = new Agent({
    connect: { lookup: guardedLookup(opts.resolve ?? defaultResolver, allowPrivate, () => current), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 2,
  });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    for (let hop = 0; ; hop++) {
      current = url.href;
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(literal) && !allowPrivate(literal)) {
        const reason = forbiddenAddressReason(literal);
        if (reason) throw refuse(current, literal, literal, reason);
      }
      const res = await request(url, {
        method: opts.postJson === undefined ? 'GET' : 'POST',
        dispatcher: agent,
        signal: deadline.signal,
        headers: {
          'user-agent': opts.userAgent ?? 'kbchat-link-fetcher/0.1 (+knowledge base import)',
          accept:
            opts.postJson === undefined ? 'text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.5' : 'application/json',
          ...(opts.postJson === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: opts.postJson,
      });
      const location = header(res.headers, 'location');
      if (REDIRECTS.has(res.statusCode) && location) {
        await res.body.dump();
        if (hop >= maxRedirects) {
          throw new IngestError('link_too_many_redirects', `${link} redirects more than ${maxRedirects} times; give the final address.`);
        }
        url = parseLink(new URL(location, url).href);
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        throw new IngestError('link_bad_status', `${current} answered HTTP ${res.statusCode}; check that the page is public and the address is right.`);
      }
      const declared = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.body.destroy();
        throw tooLarge(current, maxBytes);
      }
      const contentType = header(res.headers, 'content-type') ?? '';
      const raw = await readCapped(res.body, maxBytes, current);
      const data = decompress(raw, header(res.headers, 'content-encoding'), maxBytes, current);
      return { url: current, contentType, data };
    }
  } catch (err) {
    const ingest = findIngestError(err);
    if (ingest) throw ingest;
    if (deadline.signal.aborted || /timeout/i.test((err as Error)?.name ?? '')) {
      throw new IngestError('link_timeout', `${current} did not answer within ${Math.round(timeoutMs / 1000)} s.`, { cause: err });
    }
    const detail = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code ?? (err as Error)?.message;
    throw new IngestError('link_unreachable', `${current} could not be fetched (${detail}).`, { cause: err });
  } finally {
    clearTimeout(timer);
    void agent.destroy().catch(() => {});
  }
}

async function readBody(data: Buffer, contentType: string, url: URL): Promise<Omit<FetchLinkResult, 'url' | 'contentType'>> {
  const type = contentType.split(';')[0].trim().toLowerCase();
  let path = url.pathname.split('/').pop() || 'index';
  try {
    path = decodeURIComponent(path);
  } catch {
    // malformed percent-encoding: keep it encoded, it only names the document
  }
  let format: DocumentFormat | undefined = FORMAT_BY_TYPE[type];
  // text/plain for a .md file is how most static hosts serve markdown.
  if (format === 'txt' && /\.(md|markdown)$/i.test(path)) format = 'md';
  if (!format) {
    if (type && type !== 'application/octet-stream' && type !== 'binary/octet-stream') {
      throw new IngestError('link_unsupported_content', `${url.href} is ${type}, which cannot be read as text. Link a web page, PDF, DOCX or text file.`);
    }
    try {
      format = detectFormat({ data, filename: path });
    } catch {
      throw new IngestError('link_unsupported_content', `${url.href}: the content type is unknown and the content is not a readable document.`);
    }
  }
  const filename = `${path.replace(/\.[^.]*$/, '')}.${format}`;
  const result = await readDocument({ data, filename, mimeType: contentType }, { maxBytes: Number.MAX_SAFE_INTEGER });
  return { format: result.format, text: result.text, ...(result.title ? { title: result.title } : {}) };
}
