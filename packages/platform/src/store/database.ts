// The platform store's one database type, composed from each module's tables
// (<module>/tables.ts). Every store, service and route that takes a database
// handle takes a PlatformDb (or a transaction of one); only migrations take
// Kysely<any>, because they describe the schema as it was when they were
// written, not as it is now (https://kysely.dev/docs/migrations: "It's
// important to use Kysely<any> and not Kysely<YourDatabase>").
//
// Column types: the platform runs on PostgreSQL only, embedded (PGlite) or a
// server (node-postgres). Both read bigint (int8) as a JS number: PGlite does
// so within 2^53, and db.ts gives node-postgres numericTypeParsers. So bigint
// columns (epoch-millisecond times, sizes, sequence numbers) are plain
// `number` here, with no ColumnType<string | number, ...> split. (Aggregates
// over bigint such as sum() are numeric, a string on PGlite: the queries that
// read them wrap them in Number().) The gateway, which also runs on MySQL and
// MariaDB, declares its own tables in gateway/src/store/schema.ts.
import type { Kysely, Transaction } from 'kysely';
import type { AccountsTables } from '../accounts/tables.js';
import type { AnnotationsTables } from '../annotations/tables.js';
import type { AppsTables } from '../apps/tables.js';
import type { ChatTables } from '../chat/tables.js';
import type { DatasetsTables } from '../datasets/tables.js';
import type { IndexingTables } from '../indexing/tables.js';
import type { KeysTables } from '../keys/tables.js';
import type { RetrievalTables } from '../retrieval/tables.js';
import type { RetrievalChecksTables } from '../retrieval-checks/tables.js';
import type { ShareTables } from '../share/tables.js';
import type { ToolsTables } from '../tools/tables.js';
import type { UploadsTables } from '../uploads/tables.js';

export interface PlatformDatabase
  extends
    KeysTables,
    AccountsTables,
    AppsTables,
    AnnotationsTables,
    ChatTables,
    DatasetsTables,
    IndexingTables,
    RetrievalTables,
    RetrievalChecksTables,
    ShareTables,
    ToolsTables,
    UploadsTables {}

/** The platform store, or a transaction of it (a Transaction is a Kysely). */
export type PlatformDb = Kysely<PlatformDatabase>;
export type PlatformTx = Transaction<PlatformDatabase>;
