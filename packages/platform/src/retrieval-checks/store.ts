// SQL for retrieval checks and their runs, every query scoped by team. The
// chunking fingerprint is read here too: it is a query over the dataset's
// collections and data.
import { createHash } from 'node:crypto';
import type { CheckChunking as Chunking, CheckRun as Run } from '@kbchat/contracts';
import { sql, type Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { CheckResult, CheckSettings, Expectation } from './evaluate.js';
import type { RetrievalCheckRunsTable, RetrievalChecksTable, RunStatus } from './tables.js';

export type { Chunking, Run, RunStatus };
export type CheckRow = Selectable<RetrievalChecksTable>;
export type RunRow = Selectable<RetrievalCheckRunsTable>;

export interface Check {
  id: string;
  datasetId: string;
  question: string;
  expected: Expectation[];
  settings: CheckSettings;
  createdAt: number;
  updatedAt: number;
}

export class ChecksStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(row: CheckRow): Promise<void> {
    await this.db.insertInto('retrieval_checks').values(row).execute();
  }

  async check(teamId: string, id: string): Promise<Check | undefined> {
    const row = await this.db.selectFrom('retrieval_checks').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return row && toCheck(row);
  }

  async list(teamId: string, datasetId: string): Promise<Check[]> {
    const rows = await this.db
      .selectFrom('retrieval_checks')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toCheck);
  }

  async count(teamId: string, datasetId: string): Promise<number> {
    const r = await this.db
      .selectFrom('retrieval_checks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async update(teamId: string, id: string, set: Pick<CheckRow, 'question' | 'expected' | 'settings' | 'updated_at'>): Promise<boolean> {
    const r = await this.db.updateTable('retrieval_checks').set(set).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async remove(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('retrieval_checks').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** False when the dataset has a running run already (the partial unique index). */
  async insertRun(row: RunRow): Promise<boolean> {
    try {
      await this.db.insertInto('retrieval_check_runs').values(row).execute();
      return true;
    } catch (err) {
      if ((err as { code?: string } | null)?.code === '23505') return false;
      throw err;
    }
  }

  async progress(id: string, done: number, at: number): Promise<void> {
    await this.db.updateTable('retrieval_check_runs').set({ done, updated_at: at }).where('id', '=', id).execute();
  }

  async finishRun(id: string, results: CheckResult[], at: number): Promise<void> {
    await this.db
      .updateTable('retrieval_check_runs')
      .set({
        status: 'done',
        done: results.length,
        passed: results.filter((r) => r.passed).length,
        results: JSON.stringify(results),
        updated_at: at,
        finished_at: at,
      })
      .where('id', '=', id)
      .execute();
  }

  async run(teamId: string, id: string): Promise<Run | undefined> {
    const row = await this.db.selectFrom('retrieval_check_runs').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return row && toRun(row);
  }

  /** The dataset's runs, newest first, without their results. */
  async runs(teamId: string, datasetId: string): Promise<Omit<Run, 'results'>[]> {
    const rows = await this.db
      .selectFrom('retrieval_check_runs')
      .select(['id', 'team_id', 'dataset_id', 'status', 'total', 'done', 'passed', 'vector_model', 'chunking', 'started_at', 'updated_at', 'finished_at'])
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => {
      const { results: _, ...rest } = toRun({ ...r, results: '[]' });
      return rest;
    });
  }

  /** The newest run of the dataset, optionally only a finished one started before `before`. */
  async latestRun(teamId: string, datasetId: string, opts: { done?: boolean; before?: { startedAt: number; id: string } } = {}): Promise<Run | undefined> {
    let q = this.db.selectFrom('retrieval_check_runs').selectAll().where('team_id', '=', teamId).where('dataset_id', '=', datasetId);
    if (opts.done) q = q.where('status', '=', 'done');
    const b = opts.before;
    if (b) q = q.where((eb) => eb.or([eb('started_at', '<', b.startedAt), eb.and([eb('started_at', '=', b.startedAt), eb('id', '<', b.id)])]));
    const row = await q.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row && toRun(row);
  }

  /** Keeps the newest `keep` ended runs of a dataset (a running one is never removed). */
  async prune(datasetId: string, keep: number): Promise<void> {
    const kept = await this.db
      .selectFrom('retrieval_check_runs')
      .select('id')
      .where('dataset_id', '=', datasetId)
      .where('status', '!=', 'running')
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(keep)
      .execute();
    let q = this.db.deleteFrom('retrieval_check_runs').where('dataset_id', '=', datasetId).where('status', '!=', 'running');
    if (kept.length)
      q = q.where(
        'id',
        'not in',
        kept.map((r) => r.id),
      );
    await q.execute();
  }

  /** Runs that stopped moving (their process ended) are marked interrupted, so that a new run may start. */
  async closeStale(datasetId: string, staleBefore: number, at: number): Promise<void> {
    await this.db
      .updateTable('retrieval_check_runs')
      .set({ status: 'interrupted', finished_at: at })
      .where('dataset_id', '=', datasetId)
      .where('status', '=', 'running')
      .where('updated_at', '<', staleBefore)
      .execute();
  }

  async chunking(datasetId: string): Promise<Omit<Chunking, 'pending'>> {
    const collections = await sql<{ n: number; h: string | null }>`
      select count(*) as n, string_agg(id || ':' || chunk_size || ':' || coalesce(chunk_splitter, '') || ':' || training_type, ',' order by id) as h
      from collections where dataset_id = ${datasetId}`.execute(this.db);
    // md5 in SQL: one short string back, however many chunks the dataset has.
    const data = await sql<{ n: number; h: string | null }>`
      select count(*) as n, md5(coalesce(string_agg(id || ':' || updated_at, ',' order by id), '')) as h
      from data where dataset_id = ${datasetId}`.execute(this.db);
    const c = collections.rows[0]!;
    const d = data.rows[0]!;
    const fingerprint = createHash('sha256')
      .update(`${c.h ?? ''}\n${d.h ?? ''}`)
      .digest('hex')
      .slice(0, 16);
    return { fingerprint, collections: Number(c.n), chunks: Number(d.n) };
  }
}

function toCheck(r: CheckRow): Check {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    question: r.question,
    expected: JSON.parse(r.expected),
    settings: JSON.parse(r.settings),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** bigint columns come back as strings from PostgreSQL. */
function toRun(r: RunRow): Run {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    status: r.status,
    total: Number(r.total),
    done: Number(r.done),
    passed: Number(r.passed),
    vectorModel: r.vector_model,
    chunking: JSON.parse(r.chunking),
    results: JSON.parse(r.results),
    startedAt: Number(r.started_at),
    updatedAt: Number(r.updated_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  };
}
