// kill -9 of `kbchat start` while it indexes an upload, on the embedded store,
// then a start on the same data dir: the upload must finish with every chunk
// indexed exactly once (one vector per index text, one full-text document per
// chunk, no chunk twice, nothing left queued), and the restart must pick the
// work up at once rather than after the dead process's lease runs out.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, cleanEnv, freePort, listeningUrl, REPO, sleep, startKbchat, tempDir } from './lib.mjs';

const KEY = 'kbchat-faults-platform-key-0123456789';
const CHUNKS = 300;

/** A document of CHUNKS paragraphs, each about one chunk long at chunkSize 100. */
function documentText() {
  const words = 'ledger lease balance upstream channel token price refresh vector chunk queue worker'.split(' ');
  return Array.from({ length: CHUNKS }, (_, i) => {
    const sentence = Array.from({ length: 60 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
    return `Paragraph ${i}: ${sentence}.`;
  }).join('\n\n');
}

async function progress(base, collectionId) {
  const r = await api(base, `/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`, { token: KEY });
  return r.body.data;
}

export async function indexingCase(report, sim) {
  const kase = 'kill -9 of kbchat start while indexing';
  const data = tempDir('start');
  const config = join(data.dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      llmModels: [{ model: 'sim-chat', maxContext: 16000, maxResponse: 4000, quoteMaxToken: 8000 }],
      vectorModels: [{ model: 'sim-embed-384', defaultToken: 512, maxToken: 8000 }],
      reRankModels: [],
    }),
  );
  const [gatewayPort, platformPort] = [await freePort(), await freePort()];
  const args = ['start', '--data-dir', data.dir, '--port', String(platformPort), '--gateway-port', String(gatewayPort)];
  const env = cleanEnv({
    CONFIG_PATH: config,
    INITIAL_API_KEY: KEY,
    SIM_API_KEY: sim.key,
    SIM_BASE_URL: `${sim.url}/v1`,
    SIM_MODELS: 'sim-chat,sim-embed-384',
  });
  const ready = /\[platform\] listening on/;
  let p;
  try {
    p = await startKbchat('start', args, env, ready);
    const base = listeningUrl(p, 'platform');
    const dataset = await api(base, '/api/core/dataset/create', { method: 'POST', token: KEY, json: { name: 'faults', vectorModel: 'sim-embed-384' } });
    const created = await api(base, '/api/core/dataset/collection/create/text', {
      method: 'POST',
      token: KEY,
      json: { datasetId: dataset.body.data, name: 'faults.md', text: documentText(), chunkSize: 100 },
    });
    const { collectionId, results } = created.body.data ?? {};
    if (!report.check(kase, 'upload accepted', created.status === 200 && results?.insertLen > 0, `HTTP ${created.status}, ${results?.insertLen} chunks`))
      return;

    // Killed once a part of it is indexed, and well before the end.
    let before;
    const until = Date.now() + 60_000;
    do {
      before = await progress(base, collectionId);
      await sleep(100);
    } while (before.done < before.total * 0.2 && Date.now() < until);
    await p.kill9();
    const atKill = await Promise.resolve(before);

    const restartedAt = Date.now();
    p = await startKbchat('start (again)', args, env, ready);
    // "At once" counts from when the new process listens: its start (PGlite, the local models) is not the point here.
    const listeningAt = Date.now();
    const again = listeningUrl(p, 'platform');
    let now;
    let movedAfter;
    while (Date.now() - restartedAt < 120_000) {
      now = await progress(again, collectionId);
      if (movedAfter === undefined && now.done > atKill.done) movedAfter = Date.now() - listeningAt;
      if (now.failed > 0 || (now.total > 0 && now.done === now.total)) break;
      await sleep(100);
    }
    report.check(kase, 'killed mid-upload', atKill.done > 0 && atKill.done < atKill.total, `${atKill.done} of ${atKill.total} chunks done at the kill`);
    report.check(
      kase,
      'restart resumes at once',
      movedAfter !== undefined && movedAfter < 15_000,
      movedAfter === undefined
        ? 'no progress after the restart'
        : `progress ${(movedAfter / 1000).toFixed(1)} s after the new process listened (${((listeningAt - restartedAt) / 1000).toFixed(1)} s to start)`,
    );
    // The dead process held its items for 60 s (the indexing lease): finishing well before that means they were released at start.
    const finishedAfter = Date.now() - restartedAt;
    report.check(
      kase,
      'upload finishes, dead leases released',
      now.done === now.total && now.failed === 0 && finishedAfter < 45_000,
      `${now.done} of ${now.total} done, ${now.failed} failed${now.lastError ? ` (${now.lastError})` : ''}, ${(finishedAfter / 1000).toFixed(1)} s after the restart (the lease is 60 s)`,
    );
    const code = await p.stop();
    p = undefined;
    report.check(kase, 'stops cleanly', code === 0, `exit code ${code}`);

    // The store itself, opened read-only in spirit (no migration) once kbchat is gone.
    const { openPGlite } = await import(join(REPO, 'packages/shared/dist/pglite.js'));
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const pg = await openPGlite(join(data.dir, 'platform-db'), { extensions: { vector } });
    try {
      const { rows } = await pg.query(
        `select
          (select count(*) from data where collection_id = $1)::int as chunks,
          (select count(*) from (select chunk_index from data where collection_id = $1 group by chunk_index having count(*) > 1) d)::int as repeated,
          (select count(*) from data_indexes i join data d on d.id = i.data_id where d.collection_id = $1)::int as indexes,
          (select count(*) from data_indexes i join data d on d.id = i.data_id where d.collection_id = $1
             and not exists (select 1 from vectors_384 v where v.index_id = i.id))::int as without_vector,
          (select count(*) from vectors_384 v where not exists (select 1 from data_indexes i where i.id = v.index_id))::int as stray_vectors,
          (select count(*) from data d where d.collection_id = $1 and not exists (select 1 from search_docs s where s.data_id = d.id))::int as not_in_fulltext,
          (select count(*) from training_queue)::int as queued`,
        [collectionId],
      );
      const c = rows[0];
      const ok =
        c.chunks === results.insertLen && c.repeated === 0 && c.without_vector === 0 && c.stray_vectors === 0 && c.not_in_fulltext === 0 && c.queued === 0;
      report.check(
        kase,
        'every chunk indexed exactly once',
        ok,
        `${c.chunks} chunks (${results.insertLen} uploaded), ${c.repeated} repeated, ${c.indexes} index texts, ${c.without_vector} without a vector, ${c.stray_vectors} stray vectors, ${c.not_in_fulltext} missing from full text, ${c.queued} queued`,
      );
    } finally {
      await pg.close();
    }
  } finally {
    if (p) await p.kill9();
    data.remove();
  }
}
