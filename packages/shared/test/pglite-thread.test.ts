// PGlite on a worker thread behaves like PGlite in-process for everything the
// stores use: parameters, rows, affected counts, errors with their codes,
// Kysely transactions, COPY from a blob, and a data dir that survives a reopen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { copyFromBlob, PGliteDialect } from '../src/pglite.js';
import { PGliteThread } from '../src/pglite-thread.js';

interface Tables {
  items: { id: number; name: string; price: string | number };
}

describe('PGliteThread', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('runs queries with parameters and returns rows and affected counts', async () => {
    const pg = await PGliteThread.open('memory://');
    try {
      await pg.query('create table t (id int primary key, name text, big bigint, at timestamptz)');
      const ins = await pg.query('insert into t values ($1, $2, $3, $4), ($5, $6, $7, $8)', [1, 'a', 9007199254740991n, new Date(0), 2, 'b', 5, null]);
      expect(ins.affectedRows).toBe(2);
      const { rows } = await pg.query<{ id: number; name: string; at: Date | null }>('select id, name, at from t order by id');
      expect(rows.map((r) => [r.id, r.name])).toEqual([
        [1, 'a'],
        [2, 'b'],
      ]);
      expect(rows[0]!.at).toBeInstanceOf(Date);
      expect(rows[0]!.at!.getTime()).toBe(0);
      expect(rows[1]!.at).toBeNull();
    } finally {
      await pg.close();
    }
  });

  it('rejects with the PostgreSQL error code and fields, and keeps working after it', async () => {
    const pg = await PGliteThread.open('memory://');
    try {
      await pg.query('create table t (id int primary key)');
      await pg.query('insert into t values (1)');
      const err = (await pg.query('insert into t values (1)').catch((e: unknown) => e)) as Error & { code?: string; constraint?: string };
      expect(err).toBeInstanceOf(Error);
      expect(err.code).toBe('23505');
      expect(err.constraint).toBe('t_pkey');
      expect(err.message).toMatch(/duplicate key/);
      const bad = (await pg.query('select * from nowhere').catch((e: unknown) => e)) as Error & { code?: string };
      expect(bad.code).toBe('42P01');
      expect((await pg.query<{ n: number }>('select count(*)::int as n from t')).rows[0]!.n).toBe(1);
    } finally {
      await pg.close();
    }
  });

  it('serves a Kysely dialect: a failed transaction leaves nothing, a committed one stays, COPY reads a blob inside a transaction', async () => {
    const pg = await PGliteThread.open('memory://');
    const dialect = new PGliteDialect(pg);
    const db = new Kysely<Tables>({ dialect });
    try {
      await sql`create table items (id int primary key, name text not null, price numeric not null)`.execute(db);
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('items').values({ id: 1, name: 'kept?', price: 1 }).execute();
          await trx.insertInto('items').values({ id: 1, name: 'duplicate', price: 2 }).execute();
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await db.selectFrom('items').selectAll().execute()).toEqual([]);
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 1, name: 'one', price: 1.5 }).execute();
      });
      // COPY through Kysely, inside a transaction that rolls back (nothing stays) and one that commits.
      const copy = () => copyFromBlob(`copy items (id, name, price) from '/dev/blob' with (format csv)`, new Blob(['2,"two, with a comma",2\n3,"three",3\n']));
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.executeQuery(copy());
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await db.selectFrom('items').select('id').execute()).toEqual([{ id: 1 }]);
      await db.transaction().execute(async (trx) => {
        await trx.executeQuery(copy());
      });
      const rows = await db.selectFrom('items').select(['id', 'name']).orderBy('id').execute();
      expect(rows).toEqual([
        { id: 1, name: 'one' },
        { id: 2, name: 'two, with a comma' },
        { id: 3, name: 'three' },
      ]);
      const del = await db.deleteFrom('items').where('id', '>', 1).executeTakeFirst();
      expect(del.numDeletedRows).toBe(2n);
    } finally {
      await db.destroy();
    }
    await expect(pg.query('select 1')).rejects.toThrow(/closed/);
  });

  it('keeps a data dir across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-pglite-thread-'));
    dirs.push(dir);
    const first = await PGliteThread.open(join(dir, 'db'));
    await first.query('create table t (v text)');
    await first.query('insert into t values ($1)', ['still here']);
    await first.close();
    const second = await PGliteThread.open(join(dir, 'db'));
    try {
      expect((await second.query<{ v: string }>('select v from t')).rows).toEqual([{ v: 'still here' }]);
    } finally {
      await second.close();
    }
  });

  it('does not keep a process alive while idle, and keeps it alive while a query is out', () => {
    // A child process opens a store, runs a query and then forgets to close it: it must still exit.
    const src = new URL('../dist/pglite-thread.js', import.meta.url).pathname;
    const code = `import(${JSON.stringify(src)}).then(async ({ PGliteThread }) => {
      const pg = await PGliteThread.open('memory://');
      const { rows } = await pg.query('select pg_sleep(0.2), 41 + 1 as n');
      console.log('answer', rows[0].n);
    });`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
    expect(out.trim()).toBe('answer 42');
  });

  it('opens under V8 flags, which Node refuses to hand to a worker', () => {
    const src = new URL('../dist/pglite-thread.js', import.meta.url).pathname;
    const code = `import(${JSON.stringify(src)}).then(async ({ PGliteThread }) => {
      const pg = await PGliteThread.open('memory://');
      console.log('answer', (await pg.query('select 6 * 7 as n')).rows[0].n);
      await pg.close();
    });`;
    const flags = ['--max-semi-space-size=16', '--stack-size=2000', '--input-type=module'];
    const out = execFileSync(process.execPath, [...flags, '-e', code], { encoding: 'utf8', timeout: 60_000 });
    expect(out.trim()).toBe('answer 42');
  });
});
