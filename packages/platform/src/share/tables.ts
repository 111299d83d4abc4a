// Share links (share/migration.ts; the columns it adds to chats and chat items
// are declared with those tables, in chat/tables.ts).
import type { Generated } from 'kysely';

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
  /** Requests per minute through the link, all visitors together (null: no limit). */
  link_qpm: number | null;
  /** The gateway cost the link may spend (null: no limit), and what it has spent. */
  max_usage_points: number | null;
  used_points: Generated<number>;
  /** The operator's shareAuth hook (null: anyone with the link may chat). */
  hook_url: string | null;
  /** The sites that may embed the page, as a JSON array (empty: any). */
  allowed_origins: Generated<string>;
}

export interface ShareTables {
  out_links: OutLinksTable;
}
