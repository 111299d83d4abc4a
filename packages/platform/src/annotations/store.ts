// SQL for annotations. Every query is scoped by team and application.
import type { Selectable } from 'kysely';
import { containing } from '../datasets/store.js';
import type { PlatformDb } from '../store/database.js';
import type { AnnotationsTable } from './tables.js';

export type AnnotationRow = Selectable<AnnotationsTable>;
export type AnnotationWithHits = AnnotationRow & { hit_count: number };
/** What matching reads of each annotation. */
export type MatchRow = Pick<AnnotationRow, 'id' | 'question' | 'answer' | 'vector_model' | 'vector'>;

export class AnnotationsStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(rows: AnnotationRow[]): Promise<void> {
    if (rows.length) await this.db.insertInto('annotations').values(rows).execute();
  }

  async get(teamId: string, id: string): Promise<AnnotationRow | undefined> {
    return this.db.selectFrom('annotations').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  }

  /** Newest first, with how many answers each has given. */
  async list(
    teamId: string,
    appId: string,
    opts: { offset: number; limit: number; searchText?: string },
  ): Promise<{ rows: AnnotationWithHits[]; total: number }> {
    let base = this.db.selectFrom('annotations as a').where('a.team_id', '=', teamId).where('a.app_id', '=', appId);
    if (opts.searchText) {
      const like = containing(opts.searchText);
      base = base.where((eb) => eb.or([eb('a.question', 'ilike', like), eb('a.answer', 'ilike', like)]));
    }
    const rows = await base
      .selectAll('a')
      .select((eb) => eb.selectFrom('chat_items as i').whereRef('i.annotation_id', '=', 'a.id').select(eb.fn.countAll<number>().as('n')).as('hit_count'))
      .orderBy('a.updated_at', 'desc')
      .orderBy('a.id')
      .offset(opts.offset)
      .limit(opts.limit)
      .execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows.map((r) => ({ ...r, hit_count: Number(r.hit_count ?? 0) })), total: Number(total.n) };
  }

  /** Every annotation of the app, oldest first, in pages (an export never holds them all). */
  async *all(teamId: string, appId: string, pageSize = 500): AsyncGenerator<AnnotationRow[]> {
    let after = '';
    let afterAt = -1;
    for (;;) {
      const rows = await this.db
        .selectFrom('annotations')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('app_id', '=', appId)
        .where((eb) => eb.or([eb('created_at', '>', afterAt), eb.and([eb('created_at', '=', afterAt), eb('id', '>', after)])]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(pageSize)
        .execute();
      if (rows.length === 0) return;
      yield rows;
      const last = rows[rows.length - 1]!;
      after = last.id;
      afterAt = Number(last.created_at);
      if (rows.length < pageSize) return;
    }
  }

  /** What matching reads, for the app's annotations. */
  forMatching(appId: string): Promise<MatchRow[]> {
    return this.db.selectFrom('annotations').select(['id', 'question', 'answer', 'vector_model', 'vector']).where('app_id', '=', appId).execute();
  }

  /** Changes with every write to the app's annotations (a cache compares it before using what it holds). */
  async version(appId: string): Promise<string> {
    const r = await this.db
      .selectFrom('annotations')
      // The sum, not the max: an edit whose time is below another row's (an import's rows are dated a little ahead) still changes it.
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum('updated_at').as('at')])
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return `${r.n}:${r.at ?? 0}`;
  }

  async update(
    teamId: string,
    id: string,
    set: { question?: string; answer?: string; updated_at: number; vector_model?: null; vector?: null },
  ): Promise<boolean> {
    const r = await this.db.updateTable('annotations').set(set).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Keeps a vector made for matching (the question has not changed since: it is compared). */
  async setVector(id: string, question: string, model: string, vector: number[]): Promise<void> {
    await this.db.updateTable('annotations').set({ vector_model: model, vector }).where('id', '=', id).where('question', '=', question).execute();
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('annotations').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The app's questions, normalised by the caller, to skip duplicates on import. */
  async questions(appId: string): Promise<string[]> {
    return (await this.db.selectFrom('annotations').select('question').where('app_id', '=', appId).execute()).map((r) => r.question);
  }

  /** The annotations that correct these answers of one chat, by answer id. */
  async forAnswers(teamId: string, appId: string, chatId: string, dataIds: string[]): Promise<Map<string, AnnotationRow>> {
    if (dataIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('annotations')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('app_id', '=', appId)
      .where('chat_id', '=', chatId)
      .where('data_id', 'in', dataIds)
      .orderBy('updated_at')
      .execute();
    return new Map(rows.map((r) => [r.data_id!, r]));
  }
}
