// What every fault case needs: real kbchat processes (spawned from the built
// CLI, killed for good when the suite ends however it ends), fresh databases
// on the machine's PostgreSQL and MariaDB, an HTTP helper, a raw socket, and
// the report that becomes the table.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(REPO, 'packages/cli/bin/kbchat.js');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- report

/** One line of the table per check: what the case showed, and whether that is what it must show. */
export class Report {
  rows = [];
  /** Records a check; `shown` is what was measured, in a few words. */
  check(kase, what, ok, shown) {
    this.rows.push({ kase, what, result: ok ? 'pass' : 'FAIL', shown: String(shown) });
    return ok;
  }
  skip(kase, why) {
    this.rows.push({ kase, what: '(all)', result: 'skip', shown: why });
  }
  get failed() {
    return this.rows.filter((r) => r.result === 'FAIL').length;
  }
  table() {
    const head = { kase: 'case', what: 'check', result: 'result', shown: 'what it showed' };
    // Grouped by case, in the order the cases first reported (cases may run side by side).
    const order = [...new Set(this.rows.map((r) => r.kase))];
    const rows = [...this.rows].sort((x, y) => order.indexOf(x.kase) - order.indexOf(y.kase));
    const all = [head, ...rows];
    const width = (k) => Math.min(60, Math.max(...all.map((r) => r[k].length)));
    const cell = (r, k) => (k === 'shown' ? r[k] : r[k].padEnd(width(k)));
    const line = (r) => ['kase', 'what', 'result', 'shown'].map((k) => cell(r, k)).join('  ');
    return [line(head), ...rows.map(line)].join('\n');
  }
}

// ---------------------------------------------------------------- processes

const children = new Set();

/** Kills every process the suite started (SIGKILL: the suite may be ending on an error). */
export function killAll() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.on('exit', killAll);

/** A free port on loopback, as the OS hands it out. */
export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** The environment of an operator with no provider key, no local models, and `extra` on top. */
export function cleanEnv(extra) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), LOG_LEVEL: 'warn', LOCAL_MODELS: 'off', ...extra };
}

export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `kbchat-faults-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `kbchat <args>` as its own OS process, resolved once its output matches `ready`
 * (rejected if it exits first or takes longer than a minute).
 */
export async function startKbchat(name, args, env, ready = /listening on http:\/\/\S+/) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`kbchat ${name} not ready within 60 s:\n${out}`)), 60_000);
    const poll = setInterval(() => {
      if (!ready.test(out)) return;
      clearTimeout(timer);
      clearInterval(poll);
      ok();
    }, 20);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      clearInterval(poll);
      fail(new Error(`kbchat ${name} exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
  return {
    name,
    child,
    pid: child.pid,
    out: () => out,
    exited,
    /** SIGTERM, then the exit code (SIGKILL after 20 s, reported as 'killed'). */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return (await exited).code;
      child.kill('SIGTERM');
      const r = await Promise.race([exited, sleep(20_000).then(() => undefined)]);
      if (r) return r.code;
      child.kill('SIGKILL');
      await exited;
      return 'killed';
    },
    async kill9() {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

/** The address a started kbchat logged for `service` ("[platform] listening on …", or the only one). */
export function listeningUrl(p, service) {
  const re = service ? new RegExp(`\\[${service}\\] listening on (http://\\S+)`) : /listening on (http:\/\/\S+)/;
  return re.exec(p.out())?.[1];
}

// ---------------------------------------------------------------- databases

const PG_ADMIN = process.env.FAULTS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN = process.env.FAULTS_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

/**
 * A fresh database on the machine's PostgreSQL or MariaDB: its URL, a small
 * query function for the checks, and drop(). `{ skip }` says why there is none.
 */
export async function serverDatabase(kind) {
  const name = `kbchat_faults_${randomBytes(4).toString('hex')}`;
  if (kind === 'postgres') {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
      await admin.query(`create database ${name}`);
    } catch (err) {
      return { skip: `no PostgreSQL at ${PG_ADMIN} (${err.message})` };
    } finally {
      await admin.end().catch(() => {});
    }
    const url = new URL(PG_ADMIN);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    return {
      url: url.toString(),
      /** Rows of `text`; `?` placeholders, as in MySQL. */
      query: async (text, params = []) => {
        let i = 0;
        return (
          await pool.query(
            text.replace(/\?/g, () => `$${++i}`),
            params,
          )
        ).rows;
      },
      async drop() {
        await pool.end().catch(() => {});
        const c = new pg.Client({ connectionString: PG_ADMIN });
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`);
        await c.end();
      },
    };
  }
  const mysql = (await import('mysql2/promise')).default;
  try {
    const c = await mysql.createConnection({ uri: MYSQL_ADMIN, connectTimeout: 2000 });
    await c.query(`create database ${name}`);
    await c.end();
  } catch (err) {
    return { skip: `no MariaDB/MySQL at ${MYSQL_ADMIN} (${err.message})` };
  }
  const url = new URL(MYSQL_ADMIN);
  url.pathname = `/${name}`;
  const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 2 });
  return {
    url: url.toString(),
    query: async (text, params = []) => (await pool.query(text, params))[0],
    async drop() {
      await pool.end().catch(() => {});
      const c = await mysql.createConnection({ uri: MYSQL_ADMIN });
      await c.query(`drop database if exists ${name}`);
      await c.end();
    },
  };
}

// ---------------------------------------------------------------- HTTP

/** A JSON request; never throws for a status, only for a connection that fails. */
export async function api(base, path, { method = 'GET', json, token } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, requestId: res.headers.get('x-request-id') };
}

/**
 * A raw TCP client: writes bytes as given, records when the server first
 * answers and when it closes, so that a case can tell a 408 from a hang.
 */
export class RawSocket {
  data = '';
  closedAt = undefined;
  firstByteAt = undefined;

  static open(port) {
    return new Promise((ok, fail) => {
      const s = connect(port, '127.0.0.1', () => ok(new RawSocket(s)));
      s.once('error', fail);
    });
  }

  constructor(socket) {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (d) => {
      this.firstByteAt ??= Date.now();
      this.data += d;
    });
    socket.on('error', () => {});
    socket.on('close', () => (this.closedAt = Date.now()));
  }

  send(text) {
    this.socket.write(text, 'latin1');
  }

  /** The status of the first answer, or undefined when none came. */
  get status() {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(this.data);
    return m ? Number(m[1]) : undefined;
  }

  /** Resolves once the server has closed the connection, or after `ms`. */
  async closed(ms) {
    const until = Date.now() + ms;
    while (this.closedAt === undefined && Date.now() < until) await sleep(20);
    return this.closedAt !== undefined;
  }

  destroy() {
    this.socket.destroy();
  }
}
