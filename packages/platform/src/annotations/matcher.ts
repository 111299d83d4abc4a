// Finds the annotation closest to a question, for an application with
// annotationReply on. The same question (once normalised) needs no model at
// all; otherwise the app's datasets' vector model compares meanings through
// the gateway (the annotations' vectors are kept in the store, made the first
// time a chat needs them), and without one, word overlap does.
import type { App } from '../apps/service.js';
import type { DatasetsStore } from '../datasets/store.js';
import type { GatewayClient } from '../gateway-client/index.js';
import type { ModelConfig } from '../models/config-file.js';
import { cutToTokens, DEFAULT_VECTOR_MAX_TOKENS } from '../search/token-limits.js';
import type { AnnotationsStore, MatchRow } from './store.js';

export interface AnnotationMatch {
  id: string;
  answer: string;
  score: number;
  /** How it was compared: the same question, the vector model's cosine, or word overlap. */
  method: 'exact' | 'embedding' | 'words';
  /** Whether the score reached the app's similarity (below it, the chat runs as before). */
  used: boolean;
  model?: string;
  inputTokens?: number;
  requestIds: string[];
  /** Why the vector model was not used (its call failed): word overlap was. */
  error?: string;
}

interface Entry {
  id: string;
  question: string;
  answer: string;
  normalised: string;
  words: Set<string>;
  model: string | null;
  vector: Float32Array | null;
}

/** Inputs of one embeddings call when an app's annotations get their first vectors. */
const EMBED_BATCH = 64;
/** Annotations without a vector that a chat embeds before it answers; more (an import) are made in the background. */
const INLINE_EMBED_MAX = 256;

/** Lower case, NFKC, punctuation and runs of spaces gone: "What is X?" and "what is x" are one question. */
export function normaliseQuestion(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Words, and each Han, kana or Hangul character on its own (those scripts write no spaces). */
function wordsOf(normalised: string): Set<string> {
  return new Set(normalised.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}]+/gu) ?? []);
}

/** Dice's coefficient of two word sets: 1 for the same words, 0 for none shared. */
export function wordOverlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return (2 * shared) / (a.size + b.size);
}

function unit(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const out = Float32Array.from(v);
  const norm = Math.sqrt(n) || 1;
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export class AnnotationMatcher {
  /** Each app's annotations as last read, with the store's version they were read at. */
  private readonly cache = new Map<string, { version: string; entries: Entry[] }>();
  /** Apps whose annotations' vectors are being made in the background. */
  private readonly backfills = new Map<string, Promise<void>>();

  constructor(
    private readonly store: AnnotationsStore,
    private readonly datasets: DatasetsStore,
    private readonly models: ModelConfig,
  ) {}

  /** The closest annotation (used or not), or undefined when the app has none. */
  async match(gateway: GatewayClient, app: App, question: string): Promise<AnnotationMatch | undefined> {
    const entries = await this.entries(app.id);
    if (entries.length === 0) return undefined;
    const threshold = app.settings.annotationReply.similarity;
    const normalised = normaliseQuestion(question);
    const same = entries.find((e) => e.normalised === normalised);
    if (same) return { id: same.id, answer: same.answer, score: 1, method: 'exact', used: true, requestIds: [] };
    const model = await this.vectorModel(app);
    let error: string | undefined;
    const missing = model ? entries.filter((e) => e.model !== model || !e.vector).length : 0;
    if (model && missing > INLINE_EMBED_MAX) {
      // An import of thousands: their vectors are made in the background (once per app), and words answer meanwhile.
      this.backfill(gateway, model, app.id, entries);
      error = `the annotations' vectors are being made (${missing} to go): compared by words meanwhile`;
    } else if (model) {
      try {
        const found = await this.byVectors(gateway, model, entries, question);
        return { ...found, used: found.score >= threshold, method: 'embedding', model };
      } catch (err) {
        error = `the vector model ${model} failed (${(err as Error).message}): compared by words instead`;
      }
    }
    const words = wordsOf(normalised);
    let best = entries[0]!;
    let bestScore = -1;
    for (const e of entries) {
      const score = wordOverlap(words, e.words);
      if (score > bestScore) [best, bestScore] = [e, score];
    }
    const score = Math.round(bestScore * 10_000) / 10_000;
    return { id: best.id, answer: best.answer, score, method: 'words', used: score >= threshold, requestIds: [], ...(error ? { error } : {}) };
  }

  /** Forgets an app's annotations here at once (another process notices the store's version). */
  forget(appId: string): void {
    this.cache.delete(appId);
  }

  private backfill(gateway: GatewayClient, model: string, appId: string, entries: Entry[]): void {
    if (this.backfills.has(appId)) return;
    const done = this.embedMissing(gateway, model, entries)
      .then(
        () => undefined,
        () => undefined, // the next chat tries again
      )
      .finally(() => this.backfills.delete(appId));
    this.backfills.set(appId, done);
  }

  private async byVectors(gateway: GatewayClient, model: string, entries: Entry[], question: string): Promise<Omit<AnnotationMatch, 'used' | 'method'>> {
    const maxTokens = this.maxTokens(model);
    const { requestIds, inputTokens: embedded } = await this.embedMissing(gateway, model, entries);
    let inputTokens = embedded;
    const q = await gateway.embeddings(model, [cutToTokens(question, maxTokens).text], { priority: 'interactive' });
    if (q.requestId) requestIds.push(q.requestId);
    inputTokens += q.promptTokens;
    const v = unit(q.vectors[0]!);
    let best = entries[0]!;
    let bestScore = -Infinity;
    for (const e of entries) {
      const score = dot(v, e.vector!);
      if (score > bestScore) [best, bestScore] = [e, score];
    }
    return { id: best.id, answer: best.answer, score: Math.round(bestScore * 10_000) / 10_000, model, inputTokens, requestIds };
  }

  /** Vectors for the entries without one of `model`, made and kept in the store (they are on the entries from then on). */
  private async embedMissing(gateway: GatewayClient, model: string, entries: Entry[]): Promise<{ requestIds: string[]; inputTokens: number }> {
    const requestIds: string[] = [];
    let inputTokens = 0;
    const maxTokens = this.maxTokens(model);
    const missing = entries.filter((e) => e.model !== model || !e.vector);
    for (let i = 0; i < missing.length; i += EMBED_BATCH) {
      const batch = missing.slice(i, i + EMBED_BATCH);
      const r = await gateway.embeddings(
        model,
        batch.map((e) => cutToTokens(e.question, maxTokens).text),
        { priority: 'interactive' },
      );
      if (r.requestId) requestIds.push(r.requestId);
      inputTokens += r.promptTokens;
      await Promise.all(
        batch.map((e, j) => {
          e.vector = unit(r.vectors[j]!);
          e.model = model;
          return this.store.setVector(e.id, e.question, model, Array.from(e.vector));
        }),
      );
    }
    return { requestIds, inputTokens };
  }

  private maxTokens(model: string): number {
    return this.models.vectorModels.find((m) => m.model === model)?.maxToken ?? DEFAULT_VECTOR_MAX_TOKENS;
  }

  /** The vector model of the app's datasets, where config.json configures it; none for an app without datasets. */
  private async vectorModel(app: App): Promise<string | undefined> {
    if (app.settings.datasets.length === 0) return undefined;
    const found = await this.datasets.teamDatasets(app.teamId, app.settings.datasets);
    return found.map((d) => d.vector_model).find((m) => this.models.vectorModels.some((v) => v.model === m));
  }

  private async entries(appId: string): Promise<Entry[]> {
    const version = await this.store.version(appId);
    const hit = this.cache.get(appId);
    if (hit?.version === version) return hit.entries;
    const entries = (await this.store.forMatching(appId)).map(toEntry);
    if (this.cache.size > 1_000) this.cache.clear();
    this.cache.set(appId, { version, entries });
    return entries;
  }
}

function toEntry(r: MatchRow): Entry {
  const normalised = normaliseQuestion(r.question);
  return {
    id: r.id,
    question: r.question,
    answer: r.answer,
    normalised,
    words: wordsOf(normalised),
    model: r.vector_model,
    vector: r.vector ? unit(r.vector) : null,
  };
}
