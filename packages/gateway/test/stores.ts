// The stores a test can run against. PGlite always; PostgreSQL and MySQL /
// MariaDB when a server answers (CI has both). Each server store gets a fresh
// database that is dropped afterwards. A missing server skips with a printed reason.
import { randomBytes } from 'node:crypto';

export interface TestStore {
  name: 'pglite' | 'postgres' | 'mysql';
  /** Database URL for the gateway, or undefined when unavailable. */
  url?: string;
  skipReason?: string;
  drop(): Promise<void>;
}

const PG_ADMIN = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

async function postgresStore(): Promise<TestStore> {
  const name = `kbchat_test_${randomBytes(4).toString('hex')}`;
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    await admin.end().catch(() => {});
    return { name: 'postgres', skipReason: `PostgreSQL not available at ${PG_ADMIN}: ${(err as Error).message}`, drop: async () => {} };
  }
  await admin.end();
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    name: 'postgres',
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      // A closed pool's last connections may still be closing: forcing them
      // off makes the server send them a FATAL error, which a client already
      // ending no longer listens for (an uncaught exception in the test run).
      for (let i = 0; i < 40; i++) {
        const open = await c.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
        if (open.rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await c.query(`drop database if exists ${name} with (force)`).catch(() => c.query(`drop database if exists ${name}`));
      await c.end();
    },
  };
}

async function mysqlStore(): Promise<TestStore> {
  const name = `kbchat_test_${randomBytes(4).toString('hex')}`;
  const mysql = (await import('mysql2/promise')).default;
  let conn;
  try {
    conn = await mysql.createConnection({ uri: MYSQL_ADMIN, connectTimeout: 2000 });
    await conn.query(`create database ${name}`);
    await conn.end();
  } catch (err) {
    await conn?.end().catch(() => {});
    return { name: 'mysql', skipReason: `MySQL/MariaDB not available at ${MYSQL_ADMIN}: ${(err as Error).message}`, drop: async () => {} };
  }
  const url = new URL(MYSQL_ADMIN);
  url.pathname = `/${name}`;
  return {
    name: 'mysql',
    url: url.toString(),
    async drop() {
      const c = await mysql.createConnection({ uri: MYSQL_ADMIN });
      await c.query(`drop database if exists ${name}`);
      await c.end();
    },
  };
}

export async function testStore(name: TestStore['name']): Promise<TestStore> {
  if (name === 'pglite') return { name, url: 'pglite:memory', drop: async () => {} };
  const s = name === 'postgres' ? await postgresStore() : await mysqlStore();
  if (s.skipReason) console.warn(`[skip] ${s.skipReason}`);
  return s;
}

export const STORE_NAMES: TestStore['name'][] = ['pglite', 'postgres', 'mysql'];
