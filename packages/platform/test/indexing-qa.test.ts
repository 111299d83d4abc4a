// QA mode through the real gateway: the dataset's LLM is asked with
// buildQaPrompt (the collection's qaPrompt included), its answer parsed with
// parseQaPairs; the pairs become data rows with their default index and chunk
// items, in the transaction that completes the QA item; then chunk mode
// embeds them. The simulator's sim-echo-prompt answers with the prompt
// itself, which carries the format's example pairs and the passage's own.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import { buildQaPrompt, parseQaPairs } from '../src/ingest/qa.js';
import { enqueue, indexChunks, IndexingWorker, indexQa, progress } from '../src/indexing/index.js';
import { eventually, pgliteKind, queueRows, seed, testWriters, type TestDb } from './fixtures/indexing-stores.js';

let gw: TestGateway;
let client: GatewayClient;
let t: TestDb;
let ids = 0;

beforeAll(async () => {
  [gw, t] = await Promise.all([startTestGateway(), pgliteKind().open()]);
  client = new GatewayClient({ url: gw.url, token: ROOT_TOKEN });
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
  await t?.close();
});

const PASSAGE = 'Q: What colour is the sky on a clear day?\nA: Blue, because air scatters short wavelengths most.';

describe('QA mode', () => {
  it('turns a chunk into question/answer data rows, then indexes them', async () => {
    const s = await seed(t.db, { n: 0 });
    await t.db
      .updateTable('collections')
      .set({ training_type: 'qa', qa_prompt: 'Write questions a pupil would ask.' })
      .where('id', '=', s.collectionId)
      .execute();
    await enqueue(t.db, [
      { teamId: s.teamId, datasetId: s.datasetId, collectionId: s.collectionId, mode: 'qa', payload: JSON.stringify({ text: PASSAGE, chunkIndex: 3 }) },
    ]);
    expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 1, total: 0 });

    const qa = new IndexingWorker({
      db: t.db,
      batchSize: 1,
      pollMs: 10,
      processors: { qa: indexQa({ chat: (body) => client.chat(body), qaModelOf: () => 'sim-echo-prompt', newId: () => `qa${++ids}` }) },
    }).start();
    const expected = parseQaPairs(buildQaPrompt(PASSAGE, 'Write questions a pupil would ask.'));
    expect(expected.length).toBeGreaterThanOrEqual(2);
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]!.total).toBe(expected.length));
    await qa.stop();
    const sent = gw.sim.stats().lastBody['sim-echo-prompt'] as { messages: { content: string }[] };
    expect(sent.messages[0]!.content).toBe(buildQaPrompt(PASSAGE, 'Write questions a pupil would ask.'));

    const data = await t.db.selectFrom('data').select(['id', 'q', 'a', 'chunk_index']).where('collection_id', '=', s.collectionId).orderBy('id').execute();
    expect(data.map((d) => ({ q: d.q, a: d.a }))).toEqual(expected);
    expect(data.every((d) => Number(d.chunk_index) === 3)).toBe(true);
    expect(data.some((d) => d.q === 'What colour is the sky on a clear day?')).toBe(true);
    const indexes = await t.db.selectFrom('data_indexes').select(['data_id', 'text', 'is_default']).where('dataset_id', '=', s.datasetId).execute();
    expect(indexes).toHaveLength(data.length);
    expect(indexes.every((i) => i.is_default)).toBe(true);
    // The QA item is gone; one chunk item per new data row took its place.
    const queue = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
    expect(queue.map((r) => r.mode)).toEqual(Array(data.length).fill('chunk'));

    const chunk = new IndexingWorker({
      db: t.db,
      pollMs: 10,
      processors: { chunk: indexChunks({ embed: (m, x) => client.embeddings(m, x), vectorModelOf: () => 'sim-embed-384', ...testWriters }) },
    }).start();
    await eventually(async () =>
      expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 0, done: data.length, total: data.length }),
    );
    await chunk.stop();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from idx_test_vectors where data_id in (${sql.join(data.map((d) => d.id))})`.execute(
      t.db,
    );
    expect(Number(rows[0]!.n)).toBe(data.length);
  });

  it('an answer with no pairs fails the item with that exact reason; no LLM configured holds it', async () => {
    const s = await seed(t.db, { n: 0 });
    await enqueue(t.db, [
      { teamId: s.teamId, datasetId: s.datasetId, collectionId: s.collectionId, mode: 'qa', payload: JSON.stringify({ text: 'Some passage.' }) },
    ]);
    const noChat = new IndexingWorker({
      db: t.db,
      pollMs: 10,
      processors: { qa: indexQa({ qaModelOf: () => 'sim-chat', newId: () => `qa${++ids}` }) },
    }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]!.lastError).toBe('no QA model configured'));
    await noChat.stop();

    const worker = new IndexingWorker({
      db: t.db,
      pollMs: 10,
      maxAttempts: 1,
      processors: { qa: indexQa({ chat: (body) => client.chat(body), qaModelOf: () => 'sim-chat', newId: () => `qa${++ids}` }) },
    }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]!.failed).toBe(1));
    await worker.stop();
    const [item] = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
    expect(item.error).toMatch(/^the model sim-chat gave no question\/answer pairs; its answer began: "Echo: /);
    expect(await t.db.selectFrom('data').select('id').where('collection_id', '=', s.collectionId).execute()).toEqual([]);
  });
});
