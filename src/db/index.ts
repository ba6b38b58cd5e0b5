import '../core/check-peers.ts'

export {
  AUDIT_OUTCOMES,
  type AuditEntry,
  type AuditLog,
  type AuditOutcome,
  type AuditQuery,
  type AuditReader,
  type AuditRecord,
  createAuditLog,
  DEFAULT_AUDIT_LIMIT,
  MAX_AUDIT_LIMIT,
} from './audit/audit-log.ts'
export {
  type CreateDatabaseOptions,
  createDatabase,
  DATABASE_URL_FORMS,
  type Database,
  type Dialect,
  databaseUrlDialect,
  databaseUrlKind,
  type PostgresDatabase,
  type PostgresDb,
  pgliteDir,
  type SqliteDatabase,
  type SqliteDb,
  sqlitePath,
} from './database.ts'
export {
  classifyDatabaseError,
  type DatabaseDataError,
  type DatabaseErrorKind,
} from './database-errors.ts'
export { postgresDb, sqliteDb } from './dialect-db.ts'
export { defineConfig, type KilnConfig, kilnConfigSchema } from './kiln-config.ts'
export {
  libraryMigrationsDir,
  type MigrateOptions,
  type MigrateResult,
  MigrationError,
  type MigrationFile,
  type MigrationLogger,
  migrate,
  readMigrationFiles,
  STATEMENT_BREAKPOINT,
} from './migrate.ts'
export * from './models/index.ts'
export {
  budgetError,
  budgetedDb,
  DEFAULT_SLOW_QUERY_WAIT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type QueryBudgetOptions,
  QueryCancelledError,
  type QueryGate,
  QueryTimeoutError,
  QueryWaitTimeoutError,
  slowQueryGateOf,
  statementTimeoutOf,
} from './query-budget.ts'
export { type ApiKeyRow, apiKeysPg, apiKeysSqlite } from './tables/api-keys.ts'
export { mcpAuditPg, mcpAuditSqlite } from './tables/mcp-audit.ts'
export { type OAuthClientRow, oauthClientsPg, oauthClientsSqlite } from './tables/oauth-clients.ts'
