// Saved retrieval checks: questions with what they should find, run against a
// dataset with the same search as searchTest (SearchService), each run kept
// with the dataset's vector model and chunking, and compared with the one
// before. No HTTP here; the routes shape.
import type { DatasetsService } from '../datasets/service.js';
import { errors, PlatformError } from '../http/errors.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import type { ModelConfig } from '../models/config-file.js';
import type { SearchService } from '../search/service.js';
import { diffRuns, type RunDiff } from './diff.js';
import { failed, judge, type CheckResult, type CheckSettings, type Expectation } from './evaluate.js';
import type { Check, ChecksStore, Run } from './store.js';

/** Finished runs kept per dataset; older ones are removed when a run ends. */
export const RUNS_KEPT = 20;
/** Checks per dataset: a run makes one search each, one after another. */
export const CHECKS_MAX = 200;
/** A running run that has not moved for this long was cut off (one check's search takes seconds). */
const STALE_MS = 5 * 60_000;

export interface CheckInput {
  datasetId: string;
  question: string;
  expected: Expectation[];
  settings: CheckSettings;
}

export interface CheckWithLast extends Check {
  /** The check's result in the dataset's latest finished run, if it was in it. */
  last?: CheckResult & { runId: string; startedAt: number; stale: boolean };
}

export interface ChecksDeps {
  /** The LLM query extension uses when a check names none (as searchTest does). */
  defaultExtensionModel?: string;
  /** Items of the dataset still queued or indexing. */
  pending?: (datasetId: string) => Promise<number>;
  runsKept?: number;
}

export class RetrievalChecksService {
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly store: ChecksStore,
    private readonly datasets: DatasetsService,
    private readonly search: SearchService,
    private readonly models: ModelConfig,
    private readonly deps: ChecksDeps = {},
  ) {}

  async create(caller: KeyCaller, input: CheckInput): Promise<string> {
    await this.datasets.dataset(caller, input.datasetId);
    if ((await this.store.count(caller.teamId, input.datasetId)) >= CHECKS_MAX) {
      throw errors.badField('datasetId', `this knowledge base has ${CHECKS_MAX} checks already, the most it may have; delete some first`);
    }
    await this.validate(caller, input.datasetId, input.expected, input.settings);
    const id = newId();
    const now = Date.now();
    await this.store.insert({
      id,
      team_id: caller.teamId,
      dataset_id: input.datasetId,
      question: input.question,
      expected: JSON.stringify(input.expected),
      settings: JSON.stringify(input.settings),
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  async check(caller: KeyCaller, id: string): Promise<Check> {
    const c = await this.store.check(caller.teamId, id);
    if (!c) throw errors.notFound(`Check ${id}`);
    return c;
  }

  async update(caller: KeyCaller, id: string, patch: Partial<Omit<CheckInput, 'datasetId'>>): Promise<Check> {
    const c = await this.check(caller, id);
    const next = { question: patch.question ?? c.question, expected: patch.expected ?? c.expected, settings: patch.settings ?? c.settings };
    await this.validate(caller, c.datasetId, next.expected, next.settings);
    const now = Date.now();
    if (
      !(await this.store.update(caller.teamId, id, {
        question: next.question,
        expected: JSON.stringify(next.expected),
        settings: JSON.stringify(next.settings),
        updated_at: now,
      }))
    )
      throw errors.notFound(`Check ${id}`);
    return { ...c, ...next, updatedAt: now };
  }

  async remove(caller: KeyCaller, id: string): Promise<void> {
    if (!(await this.store.remove(caller.teamId, id))) throw errors.notFound(`Check ${id}`);
  }

  /** The dataset's checks, each with its result in the latest finished run. */
  async list(caller: KeyCaller, datasetId: string): Promise<CheckWithLast[]> {
    await this.datasets.dataset(caller, datasetId);
    const [checks, run] = await Promise.all([this.store.list(caller.teamId, datasetId), this.store.latestRun(caller.teamId, datasetId, { done: true })]);
    const results = new Map((run?.results ?? []).map((r) => [r.checkId, r]));
    return checks.map((c) => {
      const r = results.get(c.id);
      // Edited after the run began: the result is of the question or expectations as they were.
      return r && run ? { ...c, last: { ...r, runId: run.id, startedAt: run.startedAt, stale: c.updatedAt > run.startedAt } } : c;
    });
  }

  /**
   * Starts a run of every check of the dataset. It goes on after the call
   * returns (`finished` settles when it ends); its progress is in the run's
   * `done`. One run at a time per dataset (409 while one runs).
   */
  async startRun(caller: KeyCaller, datasetId: string): Promise<{ runId: string; finished: Promise<void> }> {
    if (this.stopping) throw new PlatformError(503, 'stopping', 'The platform is stopping');
    const dataset = await this.datasets.dataset(caller, datasetId);
    const now = Date.now();
    await this.store.closeStale(datasetId, now - STALE_MS, now);
    const underWay = async () => {
      const latest = await this.store.latestRun(caller.teamId, datasetId);
      return errors.conflict(
        `A run of this knowledge base's checks is under way${latest?.status === 'running' ? ` (run ${latest.id}, ${latest.done} of ${latest.total} done)` : ''}`,
      );
    };
    if ((await this.store.latestRun(caller.teamId, datasetId))?.status === 'running') throw await underWay();
    const checks = await this.store.list(caller.teamId, datasetId);
    if (checks.length === 0) throw errors.badField('datasetId', 'this knowledge base has no checks to run; create one first');
    const chunking = { ...(await this.store.chunking(datasetId)), pending: (await this.deps.pending?.(datasetId)) ?? 0 };
    const runId = newId();
    const inserted = await this.store.insertRun({
      id: runId,
      team_id: caller.teamId,
      dataset_id: datasetId,
      status: 'running',
      total: checks.length,
      done: 0,
      passed: 0,
      vector_model: dataset.vector_model,
      chunking: JSON.stringify(chunking),
      results: '[]',
      started_at: now,
      updated_at: now,
      finished_at: null,
    });
    if (!inserted) throw await underWay();
    const finished = this.execute(caller, runId, datasetId, checks);
    this.inFlight.add(finished);
    void finished.finally(() => this.inFlight.delete(finished));
    return { runId, finished };
  }

  private async execute(caller: KeyCaller, runId: string, datasetId: string, checks: Check[]): Promise<void> {
    const results: CheckResult[] = [];
    try {
      for (const c of checks) {
        if (this.stopping) return;
        results.push(await this.runOne(caller, datasetId, c));
        await this.store.progress(runId, results.length, Date.now());
      }
      await this.store.finishRun(runId, results, Date.now());
      await this.store.prune(datasetId, this.deps.runsKept ?? RUNS_KEPT);
    } catch (err) {
      // The store failed (closing, or gone): the run stays 'running' until it is seen as stale.
      console.error(`kbchat platform: retrieval checks: run ${runId}: ${(err as Error).message}`);
    }
  }

  private async runOne(caller: KeyCaller, datasetId: string, c: Check): Promise<CheckResult> {
    const s = c.settings;
    const extensionModel = s.datasetSearchExtensionModel ?? this.deps.defaultExtensionModel;
    try {
      const outcome = await this.search.search(caller, {
        datasetIds: [datasetId],
        text: c.question,
        mode: s.searchMode,
        limit: s.limit,
        similarity: s.similarity,
        embeddingWeight: s.embeddingWeight,
        usingReRank: s.usingReRank,
        rerankModel: s.rerankModel,
        extension: s.datasetSearchUsingExtensionQuery && extensionModel ? { model: extensionModel, background: s.datasetSearchExtensionBg } : undefined,
      });
      return judge(c, outcome);
    } catch (err) {
      return failed(c, (err as Error).message);
    }
  }

  /** The dataset's runs, newest first, without their results. */
  async runs(caller: KeyCaller, datasetId: string): Promise<Omit<Run, 'results'>[]> {
    await this.datasets.dataset(caller, datasetId);
    return this.store.runs(caller.teamId, datasetId);
  }

  /** A run (by id, else the dataset's latest) and, once it is done, its difference to the finished run before it. */
  async runWithDiff(caller: KeyCaller, by: { runId?: string; datasetId?: string }): Promise<{ run: Run | null; diff: RunDiff | null }> {
    let run: Run | undefined;
    if (by.runId) {
      run = await this.store.run(caller.teamId, by.runId);
      if (!run) throw errors.notFound(`Run ${by.runId}`);
    } else {
      await this.datasets.dataset(caller, by.datasetId!);
      run = await this.store.latestRun(caller.teamId, by.datasetId!);
    }
    if (!run) return { run: null, diff: null };
    if (run.status !== 'done') return { run, diff: null };
    const previous = await this.store.latestRun(caller.teamId, run.datasetId, { done: true, before: { startedAt: run.startedAt, id: run.id } });
    return { run, diff: diffRuns(run, previous) };
  }

  /** Lets runs in flight end their current check, then stops them (before the store closes). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Expected ids must be the dataset's own; models must be configured (400 naming the field). */
  private async validate(caller: KeyCaller, datasetId: string, expected: Expectation[], s: CheckSettings): Promise<void> {
    for (const [i, e] of expected.entries()) {
      if (e.collectionId) {
        const c = await this.datasets.collection(caller, e.collectionId).catch(() => undefined);
        if (c?.dataset_id !== datasetId) throw errors.badField(`expected[${i}].collectionId`, `no collection ${e.collectionId} in this knowledge base`);
      }
      if (e.dataId) {
        const d = await this.datasets.dataItem(caller, e.dataId).catch(() => undefined);
        if (d?.dataset_id !== datasetId) throw errors.badField(`expected[${i}].dataId`, `no data item ${e.dataId} in this knowledge base`);
      }
    }
    if (s.rerankModel && !this.models.reRankModels.some((m) => m.model === s.rerankModel))
      throw errors.badField('settings.rerankModel', `"${s.rerankModel}" is not a configured rerank model`);
    if (s.usingReRank && !s.rerankModel && this.models.reRankModels.length === 0)
      throw errors.badField('settings.usingReRank', 'no rerank model is configured');
    const ext = s.datasetSearchExtensionModel;
    if (ext && !this.models.llmModels.some((m) => m.model === ext))
      throw errors.badField('settings.datasetSearchExtensionModel', `"${ext}" is not a configured LLM`);
    if (s.datasetSearchUsingExtensionQuery && !ext && !this.deps.defaultExtensionModel)
      throw errors.badField('settings.datasetSearchUsingExtensionQuery', 'no LLM is configured for query extension');
  }
}
