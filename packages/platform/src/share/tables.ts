// Share links (share/migration.ts; the columns it adds to chats and chat items
// are declared with those tables, in chat/tables.ts).
export interface OutLinksTable {
  id: string;
  /** The public id in /chat/share?shareId=: random, unguessable. */
  share_id: string;
  team_id: string;
  app_id: string;
  name: string;
  expires_at: number | null;
  /** Requests per minute per visitor (null: no limit). */
  qpm: number | null;
  created_at: number;
  last_used_at: number | null;
}

export interface ShareTables {
  out_links: OutLinksTable;
}
