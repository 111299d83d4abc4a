// Two `kbchat platform` processes (PLATFORM_WORKER=off) and two `kbchat worker`
// processes on one PostgreSQL with pgvector, both platforms on one `kbchat
// gateway` in front of the upstream simulator. Uploads go through both
// platforms at once; both workers index, no item is taken by two workers or
// completed twice, and each platform's searches (full text, vectors, mixed)
// find what was uploaded through the other. Skips, saying why, where
// PostgreSQL or pgvector is absent (CI's PostgreSQL has no pgvector).
//
// "Taken twice" is read off the store itself: a trigger this test puts on
// training_queue records every change of an item's status and lease owner
// and its deletion (the deletion is the completion: it commits with the
// batch's vectors and postings, packages/platform/src/indexing/worker.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testStore, type TestStore } from '../../gateway/test/stores.js';
import { plainEnv, sleep, startService, stop, type Service } from './helpers.js';

const API_KEY = 'kbchat-scale-out-general-key';
const GATEWAY_TOKEN = 'sk-scale-out-platform-token-0123456789';
const COLLECTIONS = 6;
const ITEMS_PER_COLLECTION = 60;
/** Each embeddings call takes this long upstream, so that one worker's batches are in flight when the other claims. */
const EMBED_DELAY_MS = 150;

const store: TestStore = await testStore('postgres');
let skipReason = store.skipReason;
if (!skipReason) {
  const c = new pg.Client({ connectionString: store.url });
  await c.connect();
  const { rowCount } = await c.query(`select 1 from pg_available_extensions where name = 'vector'`);
  await c.end();
  if (!rowCount) {
    skipReason = `pgvector is not installed in the PostgreSQL at ${new URL(store.url!).host} (pg_available_extensions has no 'vector')`;
    await store.drop();
  }
}
if (skipReason) console.warn(`[skip] two platforms and two workers on one PostgreSQL: ${skipReason}`);

/** A word no other item has, which the English stemmer leaves alone: "mk" + base 26 + "q" (a final y would become i). */
function marker(n: number): string {
  let s = '';
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  } while (n > 0);
  return `mk${s.padStart(3, 'a')}q`;
}

const TOPICS = ['harbour tides', 'orchard frost', 'railway signals', 'library archives', 'glacier melt', 'market prices'];

describe.skipIf(Boolean(skipReason))('two platforms and two workers on one PostgreSQL with pgvector', () => {
  let sim: UpstreamSim;
  let db: pg.Client;
  let gateway: Service;
  const platforms: Service[] = [];
  let workers: Service[] = [];
  const dirs: string[] = [];
  const tmp = (name: string) => {
    const d = mkdtempSync(join(tmpdir(), `kbchat-scale-${name}-`));
    dirs.push(d);
    return d;
  };

  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, embedDelayMs: EMBED_DELAY_MS });
    gateway = await startService(
      'gateway',
      plainEnv({
        DATA_DIR: tmp('gw'),
        INITIAL_ROOT_TOKEN: GATEWAY_TOKEN,
        ROOT_INITIAL_BALANCE: '1000000',
        SIM_API_KEY: 'sk-sim',
        SIM_BASE_URL: `${sim.url}/v1`,
        SIM_MODELS: 'sim-chat,sim-embed-384',
        LOCAL_MODELS: 'off',
      }),
    );
    const configDir = tmp('config');
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [{ model: 'sim-embed-384' }], systemEnv: { vectorMaxProcess: 2 } }),
    );
    const env = (name: string, extra: Record<string, string> = {}) =>
      plainEnv({
        DATA_DIR: tmp(name),
        DATABASE_URL: store.url!,
        GATEWAY_URL: gateway.url!,
        GATEWAY_TOKEN,
        CONFIG_PATH: join(configDir, 'config.json'),
        INITIAL_API_KEY: API_KEY,
        ROOT_PASSWORD: 'scale-out-root-password',
        ...extra,
      });
    // The first platform migrates the fresh database; then the bookkeeping trigger; then the rest start together.
    platforms.push(await startService('platform', env('pa', { PLATFORM_WORKER: 'off' })));
    db = new pg.Client({ connectionString: store.url });
    await db.connect();
    await db.query(`
      create table scale_queue_events (seq bigserial primary key, item_id integer not null, event text not null, owner text);
      create function scale_queue_event() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into scale_queue_events (item_id, event) values (new.id, 'queued');
        elsif tg_op = 'UPDATE' then
          if new.status is distinct from old.status or new.lease_owner is distinct from old.lease_owner then
            insert into scale_queue_events (item_id, event, owner) values (new.id, new.status, new.lease_owner);
          end if;
        else
          insert into scale_queue_events (item_id, event, owner) values (old.id, 'done', old.lease_owner);
        end if;
        return null;
      end $$;
      create trigger scale_queue_events after insert or update or delete on training_queue
        for each row execute function scale_queue_event();`);
    const rest = await Promise.all([
      startService('platform', env('pb', { PLATFORM_WORKER: 'off' })),
      startService('worker', env('w1')),
      startService('worker', env('w2')),
    ]);
    platforms.push(rest[0]);
    workers = rest.slice(1);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...workers, ...platforms, gateway].map((p) => (p ? stop(p.child) : undefined)));
    await db?.end();
    await sim?.close();
    await store.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function api(p: Service, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${p.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { data: unknown };
    expect(res.status, `${path}: ${JSON.stringify(json)}`).toBe(200);
    return json.data;
  }

  /** Each uploaded item: its marker word, its text, and which platform took it in. */
  const uploaded: { marker: string; q: string; datasetId: string; via: number }[] = [];
  const datasetIds: string[] = [];

  it(`uploads through both platforms at once are indexed by both workers, each item exactly once`, async () => {
    // One dataset made through each platform; collections go to both datasets through both platforms.
    datasetIds.push(await api(platforms[0]!, '/api/core/dataset/create', { name: 'made on A', vectorModel: 'sim-embed-384' }));
    datasetIds.push(await api(platforms[1]!, '/api/core/dataset/create', { name: 'made on B', vectorModel: 'sim-embed-384' }));
    await Promise.all(
      Array.from({ length: COLLECTIONS }, async (_, k) => {
        const via = k % 2;
        const datasetId = datasetIds[k < COLLECTIONS / 2 ? 0 : 1]!;
        const topic = TOPICS[k]!;
        const { collectionId } = await api(platforms[via]!, '/api/core/dataset/collection/create/text', {
          datasetId,
          name: `notes ${k}`,
          text: `Notes on ${topic}, collection ${k}.`,
        });
        const items = Array.from({ length: ITEMS_PER_COLLECTION }, (_, i) => {
          const m = marker(k * 1000 + i);
          return { marker: m, q: `Record ${i} on ${topic}: the ${m} reading was ${(i * 37) % 101} units at station ${k}.`, datasetId, via };
        });
        uploaded.push(...items);
        // Two pushes a collection, so that items keep arriving while the workers claim.
        for (const half of [items.slice(0, ITEMS_PER_COLLECTION / 2), items.slice(ITEMS_PER_COLLECTION / 2)]) {
          const r = await api(platforms[via]!, '/api/core/dataset/data/pushData', { collectionId, data: half.map((x) => ({ q: x.q })) });
          expect(r.insertLen).toBe(half.length);
        }
      }),
    );
    const expected = COLLECTIONS * (ITEMS_PER_COLLECTION + 1); // + each collection's text chunk

    // Done when the queue is empty and both platforms say every item of both datasets is done.
    const started = Date.now();
    for (;;) {
      const { rows } = await db.query('select count(*)::int as n from training_queue');
      if (rows[0].n === 0) break;
      expect(Date.now() - started, 'indexing did not finish within 120 s').toBeLessThan(120_000);
      await sleep(200);
    }
    for (const p of platforms) {
      for (const datasetId of datasetIds) {
        const detail = await api(p, `/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
        expect(detail).toMatchObject({ total: expected / 2, done: expected / 2, failed: 0, queued: 0, indexing: 0 });
      }
    }

    const { rows: events } = await db.query<{ item_id: number; event: string; owner: string | null }>(
      'select item_id, event, owner from scale_queue_events order by seq',
    );
    const byItem = new Map<number, { event: string; owner: string | null }[]>();
    for (const e of events) byItem.set(e.item_id, [...(byItem.get(e.item_id) ?? []), e]);
    expect(byItem.size).toBe(expected);
    const doneBy = new Map<string, number>();
    const problems: string[] = [];
    for (const [id, list] of byItem) {
      const claims = list.filter((e) => e.event === 'leased');
      const done = list.filter((e) => e.event === 'done');
      // Queued once, claimed once, completed once, by the worker that claimed it.
      if (list[0]!.event !== 'queued' || claims.length !== 1 || done.length !== 1 || done[0]!.owner !== claims[0]!.owner || list.length !== 3) {
        problems.push(`item ${id}: ${list.map((e) => `${e.event}${e.owner ? `(${e.owner})` : ''}`).join(' -> ')}`);
      } else doneBy.set(done[0]!.owner!, (doneBy.get(done[0]!.owner!) ?? 0) + 1);
    }
    expect(problems, problems.slice(0, 10).join('\n')).toEqual([]);
    // Both workers took items, and nothing else did: a worker's id starts with its pid.
    const pids = workers.map((w) => String(w.child.pid));
    expect([...doneBy.keys()].map((owner) => owner.split('-')[0]).sort()).toEqual([...pids].sort());
    for (const n of doneBy.values()) expect(n).toBeGreaterThan(0);
    console.log(`items indexed by each worker: ${[...doneBy.values()].join(' and ')} of ${expected}`);

    // What the completions wrote: one vector per index text and one full-text document per item.
    const { rows: counts } = await db.query(
      `select (select count(*)::int from data where dataset_id = any($1)) as data,
              (select count(*)::int from data_indexes where dataset_id = any($1)) as indexes,
              (select count(*)::int from vectors_384 where dataset_id = any($1)) as vectors,
              (select count(*)::int from search_docs d join data on data.id = d.data_id where data.dataset_id = any($1)) as docs`,
      [datasetIds],
    );
    expect(counts[0]).toEqual({ data: expected, indexes: expected, vectors: expected, docs: expected });
    for (const w of workers) expect(w.out()).not.toMatch(/kbchat platform: indexing:/); // how a worker reports a failed batch or store call
  }, 180_000);

  it('each platform finds what was uploaded through the other, in every search mode', async () => {
    expect(uploaded.length).toBe(COLLECTIONS * ITEMS_PER_COLLECTION);
    // Every 9th item, each searched on the platform it was NOT uploaded through.
    const sample = uploaded.filter((_, i) => i % 9 === 0);
    for (const item of sample) {
      const other = platforms[1 - item.via]!;
      for (const [searchMode, text] of [
        ['fullTextRecall', item.marker],
        ['embedding', item.q],
        ['mixedRecall', item.q],
      ] as const) {
        const r = await api(other, '/api/core/dataset/searchTest', { datasetId: item.datasetId, text, searchMode, limit: 5000 });
        expect(r.list.length, `${searchMode} "${text}" on platform ${1 - item.via}`).toBeGreaterThan(0);
        expect(r.list[0].q, `${searchMode} "${text}" on platform ${1 - item.via}`).toBe(item.q);
      }
    }
  }, 120_000);
});
