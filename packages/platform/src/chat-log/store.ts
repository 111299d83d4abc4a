// SQL for an application's chat log as its team reads it: the chats a filter
// selects (paged), every message of them in order (an export, read in
// batches), and the figures per hour or day. Scoped by team and application.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { ChatItemRow, ChatRow } from '../chat/history-store.js';
import { containing } from '../datasets/store.js';
import type { PlatformDb } from '../store/database.js';
import type { ChatSource } from '../chat/tables.js';

export interface ChatLogFilter {
  /** The chat's last update, epoch ms, inclusive. */
  from?: number;
  to?: number;
  feedback?: 'good' | 'bad' | 'any';
  source?: ChatSource;
  shareId?: string;
  searchText?: string;
}

/** One chat in the team's chat log, with its counts. */
export interface ChatLogRow extends ChatRow {
  message_count: number;
  good_feedback: number;
  bad_feedback: number;
}

/** A message of an export, with its chat's columns. */
export type ExportRow = ChatItemRow & Pick<ChatRow, 'chat_id' | 'source' | 'out_link_uid'>;

export interface FigureRow {
  /** Epoch ms of the bucket's start (absent in totals). */
  bucket?: number;
  chats: number;
  questions: number;
  visitors: number;
  good_feedback: number;
  bad_feedback: number;
  annotation_answers: number;
  uncited_answers: number;
  tokens: number;
  cost: number;
  ttft_p50: number | null;
  ttft_p95: number | null;
}

/** Messages an export reads per query: its memory is this many rows, whatever the log's size. */
export const EXPORT_BATCH = 1_000;
/** Chats an export selects per query (the filter's one run for them). */
const CHAT_PAGE = 500;

export class ChatLogStore {
  constructor(private readonly db: PlatformDb) {}

  /** The app's chats the filter selects. */
  private chats(teamId: string, appId: string, f: ChatLogFilter) {
    let q = this.db.selectFrom('chats as c').where('c.team_id', '=', teamId).where('c.app_id', '=', appId);
    if (f.from !== undefined) q = q.where('c.updated_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('c.updated_at', '<=', f.to);
    if (f.source) q = q.where('c.source', '=', f.source);
    if (f.shareId) q = q.where('c.share_id', '=', f.shareId);
    if (f.feedback) {
      const feedback = f.feedback;
      q = q.where(({ exists, selectFrom, or }) => {
        const item = () => selectFrom('chat_items as f').select('f.id').whereRef('f.chat_pk', '=', 'c.id');
        const good = exists(item().where('f.user_good_feedback', 'is not', null));
        const bad = exists(item().where('f.user_bad_feedback', 'is not', null));
        return feedback === 'good' ? good : feedback === 'bad' ? bad : or([good, bad]);
      });
    }
    if (f.searchText) {
      const like = containing(f.searchText);
      q = q.where(({ eb, exists, selectFrom, or }) =>
        or([
          eb('c.title', 'ilike', like),
          exists(selectFrom('chat_items as t').select('t.id').whereRef('t.chat_pk', '=', 'c.id').where('t.content', 'ilike', like)),
        ]),
      );
    }
    return q;
  }

  /** A page of the chats the filter selects, newest first: items and answers with good and bad feedback counted. */
  async page(teamId: string, appId: string, f: ChatLogFilter, offset: number, limit: number): Promise<{ rows: ChatLogRow[]; total: number }> {
    const base = this.chats(teamId, appId, f);
    const rows = await base
      .leftJoin('chat_items as i', 'i.chat_pk', 'c.id')
      .selectAll('c')
      // count(column) counts the rows where it is set: cleared feedback is null.
      .select((eb) => [
        eb.fn.count<number>('i.id').as('message_count'),
        eb.fn.count<number>('i.user_good_feedback').as('good_feedback'),
        eb.fn.count<number>('i.user_bad_feedback').as('bad_feedback'),
      ])
      .groupBy('c.id')
      .orderBy('c.updated_at', 'desc')
      .orderBy('c.id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return {
      rows: rows.map((r) => ({ ...r, message_count: Number(r.message_count), good_feedback: Number(r.good_feedback), bad_feedback: Number(r.bad_feedback) })),
      total: Number(total.n),
    };
  }

  /**
   * Every message of the selected chats, a chat's messages together and in
   * order, in batches of EXPORT_BATCH. The filter runs once per CHAT_PAGE
   * chats (a text filter scans messages: never once per batch), and each
   * page's messages are read by a (chat_pk, id) row comparison, which walks
   * that index from where the last batch ended (no OFFSET to rescan).
   */
  async *messages(teamId: string, appId: string, f: ChatLogFilter): AsyncGenerator<ExportRow[]> {
    for (let afterChat = 0; ;) {
      const chats = await this.chats(teamId, appId, f)
        .select(['c.id', 'c.chat_id', 'c.source', 'c.out_link_uid'])
        .where('c.id', '>', afterChat)
        .orderBy('c.id')
        .limit(CHAT_PAGE)
        .execute();
      if (chats.length === 0) return;
      const byPk = new Map(chats.map((c) => [c.id, c]));
      for (let after = { chat: 0, item: 0 }; ;) {
        const rows = await this.db
          .selectFrom('chat_items as i')
          .selectAll('i')
          .where('i.chat_pk', 'in', [...byPk.keys()])
          .where((eb) => eb(eb.refTuple('i.chat_pk', 'i.id'), '>', eb.tuple(after.chat, after.item)))
          .orderBy('i.chat_pk')
          .orderBy('i.id')
          .limit(EXPORT_BATCH)
          .execute();
        if (rows.length === 0) break;
        yield rows.map((r) => {
          const c = byPk.get(r.chat_pk)!;
          return { ...r, chat_id: c.chat_id, source: c.source, out_link_uid: c.out_link_uid };
        });
        const last = rows[rows.length - 1]!;
        after = { chat: last.chat_pk, item: last.id };
        if (rows.length < EXPORT_BATCH) break;
      }
      afterChat = chats[chats.length - 1]!.id;
      if (chats.length < CHAT_PAGE) return;
    }
  }

  /**
   * The app's figures over messages made in [from, to): per bucket of
   * `bucketMs` (UTC) or, without one, in all. Percentiles are PostgreSQL's
   * percentile_cont over the answers that finished.
   */
  async figures(teamId: string, appId: string, from: number, to: number, bucketMs?: number): Promise<FigureRow[]> {
    // A literal, not a parameter: GROUP BY must see the same expression as the select list.
    const bucket = bucketMs ? sql<number>`floor(i.created_at / ${sql.lit(bucketMs)}) * ${sql.lit(bucketMs)}` : undefined;
    const isQuestion = sql<SqlBool>`i.role = 'user'`;
    const finished = sql<SqlBool>`i.role = 'assistant' and i.status = 'done'`;
    const visitor = sql`case when c.share_id is null then 'team' else c.share_id || ':' || c.out_link_uid end`;
    const count = (where: Expression<SqlBool>) => sql<number>`count(*) filter (where ${where})`;
    let q = this.db
      .selectFrom('chat_items as i')
      .innerJoin('chats as c', 'c.id', 'i.chat_pk')
      .where('c.team_id', '=', teamId)
      .where('c.app_id', '=', appId)
      .where('i.created_at', '>=', from)
      .where('i.created_at', '<', to)
      .select([
        sql<number>`count(distinct i.chat_pk) filter (where ${isQuestion})`.as('chats'),
        count(isQuestion).as('questions'),
        sql<number>`count(distinct ${visitor}) filter (where ${isQuestion})`.as('visitors'),
        sql<number>`count(i.user_good_feedback)`.as('good_feedback'),
        sql<number>`count(i.user_bad_feedback)`.as('bad_feedback'),
        sql<number>`count(i.annotation_id)`.as('annotation_answers'),
        count(sql<SqlBool>`${finished} and i.quote_count = 0 and i.annotation_id is null`).as('uncited_answers'),
        sql<number>`coalesce(sum(i.tokens), 0)`.as('tokens'),
        sql<number>`coalesce(sum(i.cost), 0)`.as('cost'),
        sql<number | null>`percentile_cont(0.5) within group (order by i.ttft_ms) filter (where ${finished})`.as('ttft_p50'),
        sql<number | null>`percentile_cont(0.95) within group (order by i.ttft_ms) filter (where ${finished})`.as('ttft_p95'),
      ]);
    if (bucket) q = q.select(bucket.as('bucket')).groupBy(bucket).orderBy(bucket);
    const rows = await q.execute();
    // Counts and sums come back as strings on PGlite (bigint, numeric): read as numbers.
    return rows.map((r) => {
      const row = r as Record<string, unknown>;
      const num = (k: string) => Number(row[k] ?? 0);
      const maybe = (k: string) => (row[k] === null || row[k] === undefined ? null : Math.round(Number(row[k])));
      return {
        ...(bucket ? { bucket: num('bucket') } : {}),
        chats: num('chats'),
        questions: num('questions'),
        visitors: num('visitors'),
        good_feedback: num('good_feedback'),
        bad_feedback: num('bad_feedback'),
        annotation_answers: num('annotation_answers'),
        uncited_answers: num('uncited_answers'),
        tokens: num('tokens'),
        cost: num('cost'),
        ttft_p50: maybe('ttft_p50'),
        ttft_p95: maybe('ttft_p95'),
      };
    });
  }
}
