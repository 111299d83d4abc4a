// Schema migrations, run at every start. Written once with Kysely's schema
// builder; the few types that differ between PostgreSQL and MySQL go through
// the helpers below.
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { HIST_COLUMNS } from '../logs/rollup.js';
import { backfillRollups } from '../logs/rollup-store.js';
import type { StoreKind } from './schema.js';

function migrations(kind: StoreKind): Record<string, Migration> {
  const isMysql = kind === 'mysql';
  const longText = isMysql ? sql`longtext` : sql`text`;
  const idType = isMysql ? 'integer' : 'serial';
  const id = (c: any) => (isMysql ? c.autoIncrement().primaryKey() : c.primaryKey());
  // MySQL cannot index a TEXT column without a length; names and keys are short anyway.
  const shortText = 'varchar(255)';
  // MySQL/MariaDB: utf8mb4 whatever the server's default (often latin1), so that
  // non-Latin names, prompts in logs and emoji can be stored at all.
  const tableCreator = (db: Kysely<any>) => (name: string) => {
    const t = db.schema.createTable(name);
    return isMysql ? t.modifyEnd(sql`default character set utf8mb4`) : t;
  };

  return {
    '0001_initial': {
      async up(db: Kysely<any>) {
        const createTable = tableCreator(db);
        await createTable('users')
          .addColumn('id', idType, id)
          .addColumn('username', shortText, (c) => c.notNull().unique())
          .addColumn('password_hash', shortText, (c) => c.notNull())
          .addColumn('role', 'varchar(16)', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('group_name', 'varchar(64)', (c) => c.notNull())
          .addColumn('balance', 'bigint', (c) => c.notNull())
          .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('request_count', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();

        await createTable('sessions')
          .addColumn('id', idType, id)
          .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('user_id', 'integer', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();

        await createTable('tokens')
          .addColumn('id', idType, id)
          .addColumn('user_id', 'integer', (c) => c.notNull())
          .addColumn('name', shortText, (c) => c.notNull())
          .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('key_hint', 'varchar(32)', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('expires_at', 'bigint')
          .addColumn('quota_limit', 'bigint')
          .addColumn('quota_used', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('models', longText)
          .addColumn('ip_allow', longText)
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('last_used_at', 'bigint')
          .execute();
        await db.schema.createIndex('tokens_user_idx').on('tokens').column('user_id').execute();

        await createTable('channels')
          .addColumn('id', idType, id)
          .addColumn('name', shortText, (c) => c.notNull())
          .addColumn('type', 'varchar(32)', (c) => c.notNull())
          .addColumn('base_url', 'varchar(1024)', (c) => c.notNull())
          .addColumn('key_cipher', longText, (c) => c.notNull())
          .addColumn('models', longText, (c) => c.notNull())
          .addColumn('model_mapping', longText, (c) => c.notNull())
          .addColumn('options', longText, (c) => c.notNull())
          .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('source', 'varchar(16)', (c) => c.notNull())
          .addColumn('env_provider', 'varchar(64)', (c) => c.unique())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();

        await createTable('channel_model_state')
          .addColumn('channel_id', 'integer', (c) => c.notNull())
          .addColumn('model', shortText, (c) => c.notNull())
          .addColumn('disabled_at', 'bigint', (c) => c.notNull())
          .addColumn('reason', longText, (c) => c.notNull())
          .addPrimaryKeyConstraint('channel_model_state_pk', ['channel_id', 'model'])
          .execute();

        await createTable('model_prices')
          .addColumn('model', shortText, (c) => c.primaryKey())
          .addColumn('input_price', 'bigint', (c) => c.notNull())
          .addColumn('output_price', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();

        await createTable('logs')
          .addColumn('id', idType, id)
          .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('user_id', 'integer')
          .addColumn('token_id', 'integer')
          .addColumn('channel_id', 'integer')
          .addColumn('endpoint', 'varchar(64)', (c) => c.notNull())
          .addColumn('model', shortText, (c) => c.notNull())
          .addColumn('upstream_model', shortText)
          .addColumn('is_stream', 'smallint', (c) => c.notNull())
          .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
          .addColumn('completion_tokens', 'integer', (c) => c.notNull())
          .addColumn('usage_source', 'varchar(16)', (c) => c.notNull())
          .addColumn('cost', 'bigint', (c) => c.notNull())
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .addColumn('ttft_ms', 'integer')
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('error', longText)
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('request_body', longText)
          .execute();
        await db.schema.createIndex('logs_request_id_idx').on('logs').column('request_id').execute();
        await db.schema.createIndex('logs_created_at_idx').on('logs').column('created_at').execute();
        await db.schema.createIndex('logs_user_idx').on('logs').columns(['user_id', 'created_at']).execute();
      },
    },
    '0002_logs_without_created_at_index': {
      // Rows arrive in time order, so retention walks the primary key instead
      // (LogsStore.deleteOlderThan). The index cost a quarter of each log row's
      // insert, on the relay's own thread with the embedded store (measured:
      // 15.9 -> 12.1 us a row).
      async up(db: Kysely<any>) {
        const drop = db.schema.dropIndex('logs_created_at_idx');
        await (isMysql ? drop.on('logs') : drop).execute();
      },
    },
    '0003_durable_leases': {
      // Money a gateway process has taken from balances is a fact in the store
      // (accounts/ledger-store.ts): who holds how much, and until when the
      // holder is known to be alive. A holder that stops renewing is presumed
      // dead and its leases go back to the balances.
      async up(db: Kysely<any>) {
        const createTable = tableCreator(db);
        await createTable('ledger_holders')
          .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
          .addColumn('host', shortText, (c) => c.notNull())
          .addColumn('pid', 'integer', (c) => c.notNull())
          .addColumn('started_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addColumn('beats', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
        await createTable('balance_leases')
          .addColumn('holder_id', 'varchar(32)', (c) => c.notNull())
          .addColumn('kind', 'varchar(8)', (c) => c.notNull())
          .addColumn('account_id', 'integer', (c) => c.notNull())
          .addColumn('amount', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('balance_leases_pk', ['holder_id', 'kind', 'account_id'])
          .execute();
        await db.schema.createIndex('balance_leases_account_idx').on('balance_leases').columns(['kind', 'account_id']).execute();
      },
    },
    '0004_log_rollups_and_list_indexes': {
      // The dashboard reads rollups (logs/rollup.ts), written with the log
      // rows in one transaction; built here once from the rows already stored.
      // The log list pages by (created_at, id), newest first, and each of its
      // filters has an index in that order, so that a page reads ~limit rows
      // however deep it is and however rare the filtered value.
      // (docs/benchmarks.md has what they cost the flush and save the reads.)
      async up(db: Kysely<any>) {
        const createTable = tableCreator(db);
        // Binary on MySQL: model names that differ only in case are different models.
        const keyType = isMysql ? sql`varchar(255) character set utf8mb4 collate utf8mb4_bin` : sql`varchar(255)`;
        let t = createTable('log_rollups')
          .addColumn('grain', 'smallint', (c) => c.notNull())
          .addColumn('dim', 'varchar(8)', (c) => c.notNull())
          .addColumn('bucket', 'bigint', (c) => c.notNull())
          .addColumn('dim_key', keyType, (c) => c.notNull())
          .addColumn('requests', 'bigint', (c) => c.notNull())
          .addColumn('errors', 'bigint', (c) => c.notNull())
          .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
          .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
          .addColumn('cost', 'bigint', (c) => c.notNull())
          .addColumn('latency_sum', 'bigint', (c) => c.notNull());
        for (const h of HIST_COLUMNS) t = t.addColumn(h, 'integer', (c) => c.notNull().defaultTo(0));
        await t.addPrimaryKeyConstraint('log_rollups_pk', ['grain', 'dim', 'bucket', 'dim_key']).execute();
        await backfillRollups(db);

        const index = (name: string, columns: string[]) => db.schema.createIndex(name).on('logs').columns(columns).execute();
        await index('logs_time_idx', ['created_at', 'id']);
        await index('logs_token_time_idx', ['token_id', 'created_at', 'id']);
        await index('logs_channel_time_idx', ['channel_id', 'created_at', 'id']);
        await index('logs_model_time_idx', ['model', 'created_at', 'id']);
        // The user's index gains the id, so that its pages need no sort either.
        const drop = db.schema.dropIndex('logs_user_idx');
        await (isMysql ? drop.on('logs') : drop).execute();
        await index('logs_user_time_idx', ['user_id', 'created_at', 'id']);
        // Failed requests are a few in many: PostgreSQL indexes only them. MySQL has no
        // partial index; there the error filter walks the time index (docs/benchmarks.md).
        if (!isMysql) {
          await sql`create index logs_failed_time_idx on logs (created_at, id) where status >= 400 or error is not null`.execute(db);
        }
      },
    },
    '0005_channel_tests_and_failures': {
      // The console shows each channel model's last test (any process's, after
      // a reload) and, for an auto-disabled one, the failures that disabled it.
      async up(db: Kysely<any>) {
        await tableCreator(db)('channel_tests')
          .addColumn('channel_id', 'integer', (c) => c.notNull())
          .addColumn('model', shortText, (c) => c.notNull())
          .addColumn('tested_at', 'bigint', (c) => c.notNull())
          .addColumn('ok', 'smallint', (c) => c.notNull())
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .addColumn('status', 'integer')
          .addColumn('error', longText)
          .addPrimaryKeyConstraint('channel_tests_pk', ['channel_id', 'model'])
          .execute();
        await db.schema.alterTable('channel_model_state').addColumn('failures', longText).execute();
      },
    },
    '0006_redemptions': {
      // Top-up codes (their keys hashed, redeemed at most once) and the rows
      // of money they add to balances, so that the books still add up.
      async up(db: Kysely<any>) {
        const createTable = tableCreator(db);
        await createTable('redemptions')
          .addColumn('id', idType, id)
          .addColumn('name', shortText, (c) => c.notNull())
          .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('key_hint', 'varchar(32)', (c) => c.notNull())
          .addColumn('quota', 'bigint', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('created_by', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('redeemed_by', 'integer')
          .addColumn('redeemed_at', 'bigint')
          .execute();
        await db.schema.createIndex('redemptions_time_idx').on('redemptions').columns(['created_at', 'id']).execute();
        await createTable('balance_changes')
          .addColumn('id', idType, id)
          .addColumn('user_id', 'integer', (c) => c.notNull())
          .addColumn('delta', 'bigint', (c) => c.notNull())
          .addColumn('reason', 'varchar(16)', (c) => c.notNull())
          .addColumn('ref_id', 'integer')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('balance_changes_user_idx').on('balance_changes').columns(['user_id', 'created_at']).execute();
      },
    },
    '0007_model_fallbacks': {
      // The models that answer, in order, when every channel of a model fails
      // (relay/attempts.ts); a log row answered by one names the model asked.
      async up(db: Kysely<any>) {
        const keyType = isMysql ? sql`varchar(255) character set utf8mb4 collate utf8mb4_bin` : sql`varchar(255)`;
        await tableCreator(db)('model_fallbacks')
          .addColumn('model', keyType, (c) => c.primaryKey())
          .addColumn('fallbacks', longText, (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.alterTable('logs').addColumn('requested_model', shortText).execute();
      },
    },
    '0008_rate_limits': {
      // Requests and tokens per minute and requests per day on a token, user,
      // group or model, and budgets that reset on a token or user (limits/);
      // and the counters of the shared-database backend, used where several
      // processes share a store and no Redis.
      async up(db: Kysely<any>) {
        const createTable = tableCreator(db);
        const keyType = isMysql ? sql`varchar(255) character set utf8mb4 collate utf8mb4_bin` : sql`varchar(255)`;
        await createTable('rate_limits')
          .addColumn('scope', 'varchar(8)', (c) => c.notNull())
          .addColumn('subject', keyType, (c) => c.notNull())
          .addColumn('rpm', 'integer')
          .addColumn('tpm', 'integer')
          .addColumn('rpd', 'integer')
          .addColumn('budget', 'bigint')
          .addColumn('budget_period', 'varchar(8)')
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('rate_limits_pk', ['scope', 'subject'])
          .execute();
        await createTable('rate_counters')
          .addColumn('key', keyType, (c) => c.primaryKey())
          .addColumn('points', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0009_channel_keys': {
      // A channel's key may hold several keys, one a line (channels/key-pool.ts);
      // a key the upstream refuses or finds out of quota is disabled alone. The
      // row names it by a fingerprint (an HMAC under the gateway secret), never the key.
      async up(db: Kysely<any>) {
        await tableCreator(db)('channel_key_state')
          .addColumn('channel_id', 'integer', (c) => c.notNull())
          .addColumn('key_fp', 'varchar(64)', (c) => c.notNull())
          .addColumn('disabled_at', 'bigint', (c) => c.notNull())
          .addColumn('reason', longText, (c) => c.notNull())
          .addPrimaryKeyConstraint('channel_key_state_pk', ['channel_id', 'key_fp'])
          .execute();
      },
    },
    '0010_groups': {
      // Price groups (accounts/groups.ts): a group's ratio multiplies every cost
      // charged to its callers. `default` is always there at ratio 1, and so is
      // every group a user already names (ratio 1: what they paid until now).
      // A token may name a group of its own (null: its user's); a channel lists
      // the groups it serves (null: every group).
      async up(db: Kysely<any>) {
        const keyType = isMysql ? sql`varchar(64) character set utf8mb4 collate utf8mb4_bin` : sql`varchar(64)`;
        await tableCreator(db)('groups')
          .addColumn('name', keyType, (c) => c.primaryKey())
          .addColumn('ratio_micros', 'bigint', (c) => c.notNull())
          .addColumn('description', shortText, (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        const now = Date.now();
        const named = await db.selectFrom('users').select('group_name').distinct().execute();
        const names = [...new Set(['default', ...named.map((r: { group_name: string }) => r.group_name)])];
        await db
          .insertInto('groups')
          .values(names.map((name) => ({ name, ratio_micros: 1_000_000, description: '', created_at: now, updated_at: now })))
          .execute();
        await db.schema.alterTable('tokens').addColumn('group_name', 'varchar(64)').execute();
        await db.schema.alterTable('channels').addColumn('groups', longText).execute();
      },
    },
  };
}

export async function migrateToLatest(db: Kysely<any>, kind: StoreKind): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(kind) },
    migrationTableName: 'kbchat_migrations',
    migrationLockTableName: 'kbchat_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`gateway store migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? error}`);
  }
}

/**
 * The migrations this build knows that the store has not run: readiness
 * (/readyz) says so when another process's build migrated it less far, or
 * a migration is still to come.
 */
export async function pendingMigrations(db: Kysely<any>, kind: StoreKind): Promise<string[]> {
  const rows = await db.selectFrom('kbchat_migrations').select('name').execute();
  const done = new Set(rows.map((r: { name: string }) => r.name));
  return Object.keys(migrations(kind)).filter((name) => !done.has(name));
}
