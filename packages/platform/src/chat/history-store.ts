// SQL for stored chats (a client's chatId within one application) and their
// items. Every query is scoped by team and application.
import type { Kysely } from 'kysely';

export interface ChatRow {
  id: number;
  app_id: string;
  team_id: string;
  chat_id: string;
  title: string;
  created_at: number;
  updated_at: number;
}

export interface ChatItemRow {
  id: number;
  chat_pk: number;
  data_id: string;
  role: 'user' | 'assistant';
  content: string;
  response_data: string | null;
  created_at: number;
}

interface ChatTables {
  chats: Omit<ChatRow, 'id'> & { id: number };
  chat_items: ChatItemRow;
}

export interface ChatRef {
  teamId: string;
  appId: string;
  chatId: string;
}

export class ChatHistoryStore {
  private readonly db: Kysely<ChatTables>;

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<ChatTables>;
  }

  private chatPk(ref: ChatRef) {
    return this.db.selectFrom('chats').select('id').where('team_id', '=', ref.teamId).where('app_id', '=', ref.appId).where('chat_id', '=', ref.chatId);
  }

  /** The newest `limit` items of a chat, oldest first (none for a new chat). */
  async recentItems(ref: ChatRef, limit: number): Promise<ChatItemRow[]> {
    const rows = await this.db
      .selectFrom('chat_items')
      .selectAll()
      .where('chat_pk', '=', this.chatPk(ref))
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse() as ChatItemRow[];
  }

  /** Appends a turn, creating the chat on its first one. */
  async appendTurn(ref: ChatRef, title: string, items: Omit<ChatItemRow, 'id' | 'chat_pk'>[]): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      const chat = await tx
        .insertInto('chats')
        .values({ team_id: ref.teamId, app_id: ref.appId, chat_id: ref.chatId, title, created_at: now, updated_at: now } as never)
        .onConflict((c) => c.columns(['app_id', 'chat_id']).doUpdateSet({ updated_at: now }))
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx.insertInto('chat_items').values(items.map((i) => ({ ...i, chat_pk: chat.id })) as never).execute();
    });
  }

  async listChats(teamId: string, appId: string, offset: number, limit: number): Promise<{ rows: ChatRow[]; total: number }> {
    const base = this.db.selectFrom('chats').where('team_id', '=', teamId).where('app_id', '=', appId);
    const rows = await base.selectAll().orderBy('updated_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows as ChatRow[], total: Number(total.n) };
  }

  async items(ref: ChatRef, offset: number, limit: number): Promise<{ rows: ChatItemRow[]; total: number }> {
    const base = this.db.selectFrom('chat_items').where('chat_pk', '=', this.chatPk(ref));
    const rows = await base.selectAll().orderBy('id').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows as ChatItemRow[], total: Number(total.n) };
  }

  async deleteChat(ref: ChatRef): Promise<boolean> {
    const r = await this.db.deleteFrom('chats').where('team_id', '=', ref.teamId).where('app_id', '=', ref.appId).where('chat_id', '=', ref.chatId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
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
