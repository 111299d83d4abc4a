// SQL for stored chats (a client's chatId within one application) and their
// items. Every query is scoped by team and application.
import type { Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { ChatItemsTable, ChatsTable, ChatSource, ItemStatus } from './tables.js';

export type { ChatSource, ItemStatus };
export type ChatRow = Selectable<ChatsTable>;
export type ChatItemRow = Selectable<ChatItemsTable>;

/** What a turn's answer ends as. */
export interface AnswerOutcome {
  status: Exclude<ItemStatus, 'running'>;
  content: string;
  responseData?: unknown;
  error?: { message: string; code: string; requestId?: string };
  /** The chat's variables after the turn. */
  variables?: Record<string, unknown>;
  /** What the chat log's figures read of the answer. */
  figures?: AnswerFigures;
}

export interface AnswerFigures {
  annotationId?: string;
  quoteCount?: number;
  ttftMs?: number;
  tokens?: number;
  model?: string;
}

/** Who a share link's chat belongs to. */
export interface Visitor {
  shareId: string;
  outLinkUid: string;
}

export interface ChatRef {
  teamId: string;
  appId: string;
  chatId: string;
  /** Set for a share link's visitor: only that visitor's chats are theirs. The team (unset) reaches every chat of its app. */
  visitor?: Visitor;
  /** Recorded when the chat is made (a visitor's is always 'share'); 'online' when absent. */
  source?: ChatSource;
}

export class ChatHistoryStore {
  constructor(private readonly db: PlatformDb) {}

  private chatPk(ref: ChatRef) {
    let q = this.db.selectFrom('chats').select('id').where('team_id', '=', ref.teamId).where('app_id', '=', ref.appId).where('chat_id', '=', ref.chatId);
    if (ref.visitor) q = q.where('share_id', '=', ref.visitor.shareId).where('out_link_uid', '=', ref.visitor.outLinkUid);
    return q;
  }

  /**
   * The chat's own rows only: the team's (no link) or the visitor's. Reading
   * (chatPk) lets the team see every chat of its app; continuing and feedback
   * take this one, so that nobody writes into a chat that is not theirs.
   */
  private ownChatPk(ref: ChatRef) {
    const q = this.chatPk(ref);
    return ref.visitor ? q : q.where('share_id', 'is', null);
  }

  /**
   * The newest `limit` items of the caller's own chat, oldest first, and the
   * chat's stored variables (nothing for a new chat). A chatId that is another
   * owner's is refused here, before the turn is answered: nothing of it
   * reaches the model.
   */
  async recentItems(ref: ChatRef, limit: number): Promise<{ items: ChatItemRow[]; variables: Record<string, unknown> }> {
    const chat = await this.db
      .selectFrom('chats')
      .select(['id', 'share_id', 'out_link_uid', 'variables'])
      .where('team_id', '=', ref.teamId)
      .where('app_id', '=', ref.appId)
      .where('chat_id', '=', ref.chatId)
      .executeTakeFirst();
    if (!chat) return { items: [], variables: {} };
    if (chat.share_id !== (ref.visitor?.shareId ?? null) || chat.out_link_uid !== (ref.visitor?.outLinkUid ?? null)) throw new ChatTakenError(ref.chatId);
    const rows = await this.db.selectFrom('chat_items').selectAll().where('chat_pk', '=', chat.id).orderBy('id', 'desc').limit(limit).execute();
    // An answer still running (another turn's) or that made nothing is no history for the model.
    const items = rows.reverse().filter((i) => i.role === 'user' || (i.status !== 'running' && i.content));
    return { items, variables: parseVariables(chat.variables) };
  }

  /** The chat as the caller may read it (the team: any of its app's; a visitor: their own), or undefined. */
  async chat(ref: ChatRef): Promise<(ChatRow & { parsedVariables: Record<string, unknown> }) | undefined> {
    const row = await this.db.selectFrom('chats').selectAll().where('id', '=', this.chatPk(ref)).executeTakeFirst();
    return row ? { ...row, parsedVariables: parseVariables(row.variables) } : undefined;
  }

  /**
   * Stores a turn as its question arrives: the chat (made on its first turn),
   * the question, and its answer as 'running' with nothing in it yet. A
   * chatId already owned by someone else (another visitor, or the team when a
   * visitor asks) is refused: nobody appends to, or reads from, a chat that is
   * not theirs. Returns the chat's row id, for the answer's later writes.
   */
  async beginTurn(
    ref: ChatRef,
    turn: { title: string; question: string; questionId: string; answerId: string; variables: Record<string, unknown> },
  ): Promise<number> {
    const now = Date.now();
    const vars = JSON.stringify(turn.variables);
    const shareId = ref.visitor?.shareId ?? null;
    const uid = ref.visitor?.outLinkUid ?? null;
    return this.db.transaction().execute(async (tx) => {
      const chat = await tx
        .insertInto('chats')
        .values({
          team_id: ref.teamId,
          app_id: ref.appId,
          chat_id: ref.chatId,
          title: turn.title,
          created_at: now,
          updated_at: now,
          share_id: shareId,
          out_link_uid: uid,
          source: ref.visitor ? 'share' : (ref.source ?? 'online'),
          variables: vars,
        })
        .onConflict((c) =>
          c
            .columns(['app_id', 'chat_id'])
            .doUpdateSet({ updated_at: now, variables: vars })
            .where('chats.share_id', 'is not distinct from', shareId)
            .where('chats.out_link_uid', 'is not distinct from', uid),
        )
        .returning('id')
        .executeTakeFirst();
      if (!chat) throw new ChatTakenError(ref.chatId);
      // An answer's id names one answer: a client sending the same responseChatItemId twice would have two turns write one.
      const taken = await tx.selectFrom('chat_items').select('id').where('chat_pk', '=', chat.id).where('data_id', '=', turn.answerId).executeTakeFirst();
      if (taken) throw new ChatItemTakenError(turn.answerId);
      const item = { chat_pk: chat.id, response_data: null, created_at: now, error: null };
      await tx
        .insertInto('chat_items')
        .values([
          { ...item, data_id: turn.questionId, role: 'user', content: turn.question, status: 'done', updated_at: null },
          { ...item, data_id: turn.answerId, role: 'assistant', content: '', status: 'running', updated_at: now },
        ])
        .execute();
      return chat.id;
    });
  }

  /**
   * A running answer's heartbeat, with what it has made so far (`content`,
   * when it changed). False when the answer is no longer running: its asker
   * stopped it (requestStop), perhaps through another process.
   */
  async beatAnswer(chatPk: number, dataId: string, content?: string): Promise<boolean> {
    const r = await this.db
      .updateTable('chat_items')
      .set({ updated_at: Date.now(), ...(content === undefined ? {} : { content }) })
      .where('chat_pk', '=', chatPk)
      .where('data_id', '=', dataId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Writes how a turn's answer ended, and touches its chat (it moves to the top of the lists). */
  async finishAnswer(chatPk: number, dataId: string, outcome: AnswerOutcome): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('chat_items')
        .set({
          status: outcome.status,
          content: outcome.content,
          updated_at: now,
          response_data: outcome.responseData === undefined ? null : JSON.stringify(outcome.responseData),
          error: outcome.error ? JSON.stringify(outcome.error) : null,
          ...(outcome.figures ? figureColumns(outcome.figures) : {}),
        })
        .where('chat_pk', '=', chatPk)
        .where('data_id', '=', dataId)
        .execute();
      await tx
        .updateTable('chats')
        .set({ updated_at: now, ...(outcome.variables ? { variables: JSON.stringify(outcome.variables) } : {}) })
        .where('id', '=', chatPk)
        .execute();
    });
  }

  /** The gateway's cost of an answer's model calls (AnswerCosts). */
  async setCost(chatPk: number, dataId: string, cost: number): Promise<void> {
    await this.db.updateTable('chat_items').set({ cost }).where('chat_pk', '=', chatPk).where('data_id', '=', dataId).execute();
  }

  /**
   * The asker stops a running answer of their own chat: it is marked
   * 'stopped' at once (the process making it sees that at its next heartbeat
   * and writes what it made). Answers the chat's row id, or undefined when no
   * such answer was running.
   */
  async requestStop(ref: ChatRef, dataId: string): Promise<number | undefined> {
    const row = await this.db
      .updateTable('chat_items')
      .set({ status: 'stopped', updated_at: Date.now() })
      .where('chat_pk', '=', this.ownChatPk(ref))
      .where('data_id', '=', dataId)
      .where('role', '=', 'assistant')
      .where('status', '=', 'running')
      .returning('chat_pk')
      .executeTakeFirst();
    return row?.chat_pk;
  }

  async listChats(
    teamId: string,
    appId: string,
    offset: number,
    limit: number,
    visitor?: Visitor,
    source?: ChatSource,
  ): Promise<{ rows: ChatRow[]; total: number }> {
    let base = this.db.selectFrom('chats').where('team_id', '=', teamId).where('app_id', '=', appId);
    if (visitor) base = base.where('share_id', '=', visitor.shareId).where('out_link_uid', '=', visitor.outLinkUid);
    if (source) base = base.where('source', '=', source);
    const rows = await base.selectAll().orderBy('updated_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  async items(ref: ChatRef, offset: number, limit: number): Promise<{ rows: ChatItemRow[]; total: number }> {
    const base = this.db.selectFrom('chat_items').where('chat_pk', '=', this.chatPk(ref));
    const rows = await base.selectAll().orderBy('id').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  /** One item of a chat the caller may read, or undefined. */
  async item(ref: ChatRef, dataId: string): Promise<ChatItemRow | undefined> {
    return this.db.selectFrom('chat_items').selectAll().where('chat_pk', '=', this.chatPk(ref)).where('data_id', '=', dataId).executeTakeFirst();
  }

  async deleteChat(ref: ChatRef): Promise<boolean> {
    const r = await this.db.deleteFrom('chats').where('id', '=', this.chatPk(ref)).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Sets (or, with null, clears) the feedback on one answer of the caller's own chat (a visitor's answers are the visitor's to judge). */
  async setFeedback(ref: ChatRef, dataId: string, feedback: { good: string | null; bad: string | null }): Promise<boolean> {
    const r = await this.db
      .updateTable('chat_items')
      .set({ user_good_feedback: feedback.good, user_bad_feedback: feedback.bad })
      .where('chat_pk', '=', this.ownChatPk(ref))
      .where('data_id', '=', dataId)
      .where('role', '=', 'assistant')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async deleteItem(ref: ChatRef, dataId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('chat_items').where('chat_pk', '=', this.chatPk(ref)).where('data_id', '=', dataId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async clearChats(teamId: string, appId: string): Promise<number> {
    const r = await this.db.deleteFrom('chats').where('team_id', '=', teamId).where('app_id', '=', appId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

function figureColumns(f: AnswerFigures) {
  return {
    annotation_id: f.annotationId ?? null,
    quote_count: f.quoteCount ?? null,
    ttft_ms: f.ttftMs === undefined ? null : Math.round(f.ttftMs),
    tokens: f.tokens ?? null,
    model: f.model ?? null,
  };
}

/** Stored variables: a JSON object, or (null, or unreadable) none. */
function parseVariables(json: string | null): Record<string, unknown> {
  if (!json) return {};
  try {
    const v = JSON.parse(json);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** An answer id (responseChatItemId) the chat already has. */
export class ChatItemTakenError extends Error {
  readonly status = 409;
  readonly code = 'chat_item_id_taken';
  constructor(dataId: string) {
    super(`Invalid 'responseChatItemId': ${dataId} is already an item of this chat; send a new id for each answer`);
  }
}

/** A chatId that belongs to another owner. */
export class ChatTakenError extends Error {
  readonly status = 409;
  readonly code = 'chat_id_taken';
  constructor(chatId: string) {
    super(`The chatId ${chatId} belongs to another chat: start a new chat with a new chatId`);
  }
}
