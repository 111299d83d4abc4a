// createDataDirs: the stores a first `kbchat start` makes, with one initdb
// and copies; each copy is a database of its own.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDataDirs, openPGlite } from '../src/pglite.js';

const root = mkdtempSync(join(tmpdir(), 'kbchat-data-dirs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('createDataDirs', () => {
  it('makes every missing store, each a database of its own, and leaves an existing one alone', async () => {
    const [a, b] = [join(root, 'a'), join(root, 'b')];
    await createDataDirs([a, b]);
    expect(existsSync(join(a, 'PG_VERSION')) && existsSync(join(b, 'PG_VERSION'))).toBe(true);

    const pgA = await openPGlite(a);
    await pgA.exec('create table t (v text); insert into t values ($$only in a$$)');
    await pgA.close();
    const pgB = await openPGlite(b);
    const tables = await pgB.query<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 't'");
    expect(tables.rows[0]!.n).toBe(0);
    await pgB.close();

    // A second call finds both: nothing is made or copied over them.
    const before = statSync(join(a, 'PG_VERSION')).mtimeMs;
    await createDataDirs([a, b]);
    expect(statSync(join(a, 'PG_VERSION')).mtimeMs).toBe(before);
    const again = await openPGlite(a);
    expect((await again.query<{ v: string }>('select v from t')).rows).toEqual([{ v: 'only in a' }]);
    await again.close();
  }, 60_000);
});
