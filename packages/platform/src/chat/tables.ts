// Stored chats and their items: made by apps/migration.ts, with columns added
// by share/migration.ts (visitor, feedback, source) and chat/migration.ts
// (variables, an answer's status).
import type { ChatSource } from '@kbchat/contracts';
import type { Generated } from 'kysely';
export type { ChatSource };

/**
 * An answer's state: 'running' from the moment its question is stored until
 * it ends; 'stopped' by its asker (or, when the operator chose so, by the
 * client leaving), with what was made; 'failed' with its error. A question
 * is always 'done'.
 */
export type ItemStatus = 'running' | 'done' | 'stopped' | 'failed';

export interface ChatsTable {
  id: Generated<number>;
  app_id: string;
  team_id: string;
  /** The client's chatId: unique within its application. */
  chat_id: string;
  title: string;
  created_at: number;
  updated_at: number;
  /** A share link's visitor's chat: the link and the visitor (both null for the team's own). */
  share_id: string | null;
  out_link_uid: string | null;
  /** Has a default ('online'): optional when inserting, as Generated makes it. */
  source: Generated<ChatSource>;
  /** The chat's variables as JSON (null before its first turn stored any). */
  variables: string | null;
}

export interface ChatItemsTable {
  id: Generated<number>;
  chat_pk: number;
  /** responseChatItemId for answers, or a generated id. */
  data_id: string;
  role: 'user' | 'assistant';
  content: string;
  /** The answer's responseData (JSON), kept so a chat can be audited later. */
  response_data: string | null;
  created_at: number;
  user_good_feedback: string | null;
  user_bad_feedback: string | null;
  /** Has a default ('done'). */
  status: Generated<ItemStatus>;
  /** A failed answer's error, as JSON: {message, code, requestId}. */
  error: string | null;
  /** A running answer's last heartbeat (epoch ms): one that stopped beating was cut off by a process that died. */
  updated_at: number | null;
  /** An answer's figures (chat/migration.ts 9009), null on questions and on answers from before them. */
  annotation_id: string | null;
  quote_count: number | null;
  ttft_ms: number | null;
  tokens: number | null;
  model: string | null;
  cost: number | null;
}

export interface ChatTables {
  chats: ChatsTable;
  chat_items: ChatItemsTable;
}
