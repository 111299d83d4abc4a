// The upstream agent (http1/agent.ts) over TLS: an https server here
// with the self-signed certificate in fixtures/ (CN localhost, SANs localhost
// and 127.0.0.1, valid until 2126), and the agent in a child process (built
// dist/, run `npx tsc -b` first), because NODE_EXTRA_CA_CERTS is only read at
// a process's start.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const CERT = fixture('localhost-cert.pem');
const AGENT_JS = fileURLToPath(new URL('../dist/http1/agent.js', import.meta.url));

// Posts to each origin in turn (one agent, so keep-alive applies) and prints what came back.
const CLIENT = `
const { Http1Agent } = await import(process.env.AGENT_URL);
const agent = new Http1Agent({ connectTimeoutMs: 3000, headersTimeoutMs: 3000, bodyTimeoutMs: 3000 });
const results = [];
for (const origin of JSON.parse(process.env.ORIGINS)) {
  results.push(await new Promise((resolve) => {
    const chunks = [];
    let status;
    agent.dispatch({ origin, path: '/tls?q=1', method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'sécret ✓' }, {
      onRequestStart() {},
      onResponseStart(_c, s) { status = s; },
      onResponseData(_c, b) { chunks.push(b); },
      onResponseEnd() { resolve({ status, body: Buffer.concat(chunks).toString('utf8') }); },
      onResponseError(_c, e) { resolve({ error: e.message, code: e.code }); },
    });
  }));
}
await agent.close();
process.stdout.write(JSON.stringify(results));
`;

interface Result {
  status?: number;
  body?: string;
  error?: string;
  code?: string;
}

async function runClient(origins: string[], withCa: boolean): Promise<Result[]> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_URL: pathToFileURL(AGENT_JS).href, ORIGINS: JSON.stringify(origins) };
  delete env.NODE_EXTRA_CA_CERTS;
  if (withCa) env.NODE_EXTRA_CA_CERTS = CERT;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CLIENT], { env, timeout: 20_000 });
  return JSON.parse(stdout) as Result[];
}

let server: Server;
let port: number;
/** The SNI name of each TLS connection the server accepted (false: none sent). */
const connections: Array<string | false> = [];

beforeAll(async () => {
  expect(existsSync(AGENT_JS), `${AGENT_JS} is missing: run npx tsc -b`).toBe(true);
  server = createServer({ cert: readFileSync(CERT), key: readFileSync(fixture('localhost-key.pem')) }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => res.end(`${req.method} ${req.url} host=${req.headers.host} body=${Buffer.concat(parts).toString('utf8')}`));
  });
  server.on('secureConnection', (s: TLSSocket) => connections.push((s as TLSSocket & { servername: string | false }).servername));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('Http1Agent over TLS', () => {
  it('posts to an https upstream trusted through NODE_EXTRA_CA_CERTS, by name and by IP, keeping the connection', async () => {
    connections.length = 0;
    const byName = `https://localhost:${port}`;
    const byIp = `https://127.0.0.1:${port}`;
    const results = await runClient([byName, byName, byIp], true);
    const expected = (host: string) => ({ status: 200, body: `POST /tls?q=1 host=${host}:${port} body=sécret ✓` });
    expect(results).toEqual([expected('localhost'), expected('localhost'), expected('127.0.0.1')]);
    // Two requests by name on one connection (with the name as SNI), one by IP (no SNI for an IP).
    expect(connections).toEqual(['localhost', false]);
  });

  it('without the CA the error names the certificate problem', async () => {
    const [result] = await runClient([`https://localhost:${port}`], false);
    expect(result!.status).toBeUndefined();
    expect(result!.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(result!.error).toMatch(/self[- ]signed certificate/);
  });
});
