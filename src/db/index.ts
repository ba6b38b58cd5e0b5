import '../core/check-peers.ts'

export {
  AUDIT_OUTCOMES,
  type AuditEntry,
  type AuditLog,
  type AuditOutcome,
  type AuditQuery,
  type AuditReader,
  type AuditRecord,
  AWAITING_APPROVAL_MESSAGE,
  approvalMessage,
  createAuditLog,
  MAX_AUDIT_LIMIT,
} from './audit/audit-log.ts'
export { type CheckDatabaseOptions, checkDatabase } from './check-database.ts'
export {
  type CreateDatabaseOptions,
  createDatabase,
  type Database,
  type Dialect,
  type PostgresDatabase,
  type PostgresDb,
  pgliteDir,
  type SqliteDatabase,
  type SqliteDb,
} from './database.ts'
export {
  classifyDatabaseError,
  type DatabaseDataError,
  type DatabaseErrorKind,
} from './database-errors.ts'
export { postgresDb, sqliteDb } from './dialect-db.ts'
export { defineConfig, type KilnConfig } from './kiln-config.ts'
export {
  libraryMigrationsDir,
  type MigrateOptions,
  type MigrateResult,
  MigrationError,
  type MigrationFile,
  type MigrationLogger,
  migrate,
} from './migrate.ts'
export {
  AUTO_EXCLUDED_FIELDS,
  type ColumnDataType,
  type ColumnInfo,
  type CredentialOptions,
  createModelRegistry,
  isCredentialField,
  type ModelInfo,
  type ModelRegistry,
  type PolicyCaller,
  type PostgresModelInfo,
  type RowFilter,
  type SqliteModelInfo,
  splitWords,
  typedJson,
} from './models/index.ts'
export {
  QueryCancelledError,
  type QueryGate,
  QueryTimeoutError,
  QueryWaitTimeoutError,
  slowQueryGateOf,
} from './query-budget.ts'
export { DatabaseKeyValueStore, durableState } from './state-store.ts'
export { type ApiKeyRow, apiKeysPg, apiKeysSqlite } from './tables/api-keys.ts'
export { mcpAuditPg, mcpAuditSqlite } from './tables/mcp-audit.ts'
export { type OAuthClientRow, oauthClientsPg, oauthClientsSqlite } from './tables/oauth-clients.ts'
