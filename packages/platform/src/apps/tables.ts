// Applications (apps/migration.ts; their chats are the chat module's tables).
export interface AppsTable {
  id: string;
  team_id: string;
  name: string;
  intro: string;
  /** AppSettings as JSON. */
  config: string;
  created_at: number;
  updated_at: number;
}

export interface AppsTables {
  apps: AppsTable;
}
