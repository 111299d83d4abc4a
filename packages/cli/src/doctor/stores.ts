// Both stores reachable: a server is asked `SELECT 1` with the URL's own
// credentials (the platform's also for pgvector); an embedded store is looked
// at on disk (opening it would take the lock of a running kbchat).
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { storeHolder, type StoreHolder } from '@kbchat/shared/store-lock';
import { embeddedStoreDir } from '../preflight.js';
import { fail, ok, type Check } from './check.js';
import type { DoctorOptions } from './options.js';

/** The URL as it may be shown: never its password. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

function serverRemedy(err: NodeJS.ErrnoException & { sqlMessage?: string }, variable: string, url: string): string {
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || (u.protocol.startsWith('mysql') ? 3306 : 5432)}`;
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH')
    return `nothing answers at ${where}: start the database server (docker compose up -d), or correct ${variable}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host ${u.hostname} is not known here: correct ${variable}`;
  if (code === '28P01' || code === '28000' || code === 'ER_ACCESS_DENIED_ERROR') return `the server refuses the user or password in ${variable}: correct them`;
  if (code === '3D000' || code === 'ER_BAD_DB_ERROR') return `the database in ${variable} does not exist: create it (CREATE DATABASE ...)`;
  return `correct ${variable}, or the server it names`;
}

async function checkPostgres(url: string, needsVector: boolean, timeoutMs: number): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {}); // a server that goes away after connecting: the query below says so
  await client.connect();
  try {
    const version = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    if (!needsVector) return `PostgreSQL ${version}`;
    const vector = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (vector.rowCount === 0) throw Object.assign(new Error(`PostgreSQL ${version} without the pgvector extension`), { code: 'NO_PGVECTOR' });
    return `PostgreSQL ${version} with pgvector`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function checkMysql(url: string, timeoutMs: number): Promise<string> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: timeoutMs });
  try {
    const [rows] = await conn.query('SELECT VERSION() AS v');
    return `MySQL/MariaDB ${(rows as Array<{ v: string }>)[0]!.v}`;
  } finally {
    await conn.end().catch(() => {});
  }
}

/** Where the holder says its services listen (its lock has it once they do). */
function listeningOf(holder: StoreHolder): string {
  const at = Object.entries(holder.listening ?? {}).map(([service, a]) => `${service} on ${a.host}:${a.port}`);
  const where = holder.hostname === hostname() ? '' : ` on host ${holder.hostname}`;
  return at.length ? `, listening: ${at.join(', ')}${where}` : where;
}

async function checkStore(whose: 'gateway' | 'platform', url: string | undefined, opts: DoctorOptions): Promise<Check> {
  const name = `${whose} store`;
  const variable = whose === 'gateway' ? 'GATEWAY_DATABASE_URL' : 'DATABASE_URL';
  const dir = embeddedStoreDir(url, opts.dataDir, `${whose}-db`);
  if (!url || url.startsWith('pglite:')) {
    if (!dir) return ok(name, 'embedded, in memory');
    if (!existsSync(dir)) return ok(name, `embedded at ${dir}: not created yet (the first start creates it)`);
    const holder = storeHolder(dir);
    return ok(
      name,
      `embedded at ${dir}: ${holder ? `open in kbchat (pid ${holder.pid}, ${holder.command})${listeningOf(holder)}` : 'closed (no kbchat has it open)'}`,
    );
  }
  try {
    const what = url.startsWith('mysql') ? await checkMysql(url, opts.timeoutMs) : await checkPostgres(url, whose === 'platform', opts.timeoutMs);
    return ok(name, `${what} at ${shownUrl(url)}`);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'NO_PGVECTOR')
      return fail(
        name,
        `${e.message} at ${shownUrl(url)}`,
        'the platform needs pgvector: use the pgvector/pgvector image, or install the extension on this server',
      );
    return fail(name, `${shownUrl(url)}: ${e.message || e.code}`, serverRemedy(e, variable, url));
  }
}

export async function storeChecks(opts: DoctorOptions): Promise<Check[]> {
  return Promise.all([checkStore('gateway', opts.gatewayDatabaseUrl, opts), checkStore('platform', opts.platformDatabaseUrl, opts)]);
}
