// A model's fallbacks: the models that answer, in order, when every channel
// of a model fails with an error worth retrying (relay/attempts.ts). Read
// whole into memory (a few rows) and re-read like prices (refreshed-book.ts).
import type { Kysely } from 'kysely';
import type { GatewayTables } from '../store/schema.js';
import { updateElseInsert } from '../store/db.js';
import { RefreshedBook } from '../refreshed-book.js';

/** Fallbacks of one model at most: each failed model costs its attempts' time. */
export const MAX_FALLBACKS = 5;

export class FallbacksStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  async list(): Promise<{ model: string; fallbacks: string[] }[]> {
    const rows = await this.db.selectFrom('model_fallbacks').select(['model', 'fallbacks']).orderBy('model').execute();
    return rows.map((r) => ({ model: r.model, fallbacks: parseList(r.fallbacks) }));
  }

  async set(model: string, fallbacks: string[]): Promise<void> {
    const row = { model, fallbacks: JSON.stringify(fallbacks), updated_at: Date.now() };
    await updateElseInsert(
      () => this.db.updateTable('model_fallbacks').set(row).where('model', '=', model).executeTakeFirst(),
      () => this.db.insertInto('model_fallbacks').values(row).execute(),
    );
  }

  async delete(model: string): Promise<boolean> {
    const r = await this.db.deleteFrom('model_fallbacks').where('model', '=', model).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

function parseList(json: string): string[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.filter((m): m is string => typeof m === 'string') : [];
  } catch {
    return [];
  }
}

export class FallbackBook extends RefreshedBook<{ model: string; fallbacks: string[] }[]> {
  private byModel = new Map<string, string[]>();

  constructor(private readonly store: FallbacksStore) {
    super();
  }

  protected read(): Promise<{ model: string; fallbacks: string[] }[]> {
    return this.store.list();
  }

  protected take(rows: { model: string; fallbacks: string[] }[]): void {
    this.byModel = new Map(rows.map((r) => [r.model, r.fallbacks]));
  }

  /** The models to try after `model`, in order (none for most). */
  of(model: string): readonly string[] {
    return this.byModel.get(model) ?? [];
  }

  list(): { model: string; fallbacks: string[] }[] {
    return [...this.byModel].map(([model, fallbacks]) => ({ model, fallbacks })).sort((a, b) => a.model.localeCompare(b.model));
  }

  async set(model: string, fallbacks: string[]): Promise<void> {
    await this.edit(this.store.set(model, fallbacks));
    this.byModel.set(model, fallbacks);
  }

  async remove(model: string): Promise<boolean> {
    const gone = await this.edit(this.store.delete(model));
    this.byModel.delete(model);
    return gone;
  }
}
