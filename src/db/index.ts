export {
  type CreateDatabaseOptions,
  createDatabase,
  type Database,
  type Dialect,
  type PostgresDatabase,
  type PostgresDb,
  type SqliteDatabase,
  type SqliteDb,
  sqlitePath,
} from './database.ts'
export { defineConfig, type KilnConfig } from './kiln-config.ts'
export { type ApiKeyRow, apiKeysPg, apiKeysSqlite } from './tables/api-keys.ts'
export { type OAuthClientRow, oauthClientsPg, oauthClientsSqlite } from './tables/oauth-clients.ts'
