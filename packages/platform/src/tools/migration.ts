// Tool sources: a team's MCP servers and OpenAPI-described HTTP APIs, with the
// tools each last listed (kept here, so a chat offers them without asking the
// source first). Headers are stored only sealed.
import type { Kysely, Migration } from 'kysely';

export const toolMigrations: Record<string, Migration> = {
  '9012_tool_sources': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tool_sources')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('document', 'text')
        .addColumn('base_url', 'text')
        .addColumn('transport', 'varchar(16)')
        .addColumn('headers_sealed', 'text')
        .addColumn('header_hints', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('tools', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('listed_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tool_sources_team_idx').on('tool_sources').columns(['team_id', 'created_at']).execute();
    },
  },
};
