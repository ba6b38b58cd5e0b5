import {
  bigserial,
  index as pgIndex,
  pgTable,
  text as pgText,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core'
import { integer, index as sqliteIndex, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/** The `api_keys` table of the spec, Postgres dialect. Only the hash of a key is stored. */
export const apiKeysPg = pgTable(
  'api_keys',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    name: varchar('name', { length: 255 }).notNull(),
    prefix: varchar('prefix', { length: 16 }).notNull(),
    hashedKey: varchar('hashed_key', { length: 64 }).notNull(),
    /** JSON array of scope strings. */
    scopes: pgText('scopes'),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [pgIndex('api_keys_prefix_idx').on(table.prefix)],
)

/** The `api_keys` table, SQLite dialect: timestamps are milliseconds since the epoch. */
export const apiKeysSqlite = sqliteTable(
  'api_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name', { length: 255 }).notNull(),
    prefix: text('prefix', { length: 16 }).notNull(),
    hashedKey: text('hashed_key', { length: 64 }).notNull(),
    scopes: text('scopes'),
    lastUsedAt: integer('last_used_at', { mode: 'timestamp_ms' }),
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp_ms' })
      .notNull()
      .$defaultFn(() => new Date()),
  },
  (table) => [sqliteIndex('api_keys_prefix_idx').on(table.prefix)],
)

/** A row of the `api_keys` table. */
export type ApiKeyRow = typeof apiKeysPg.$inferSelect
