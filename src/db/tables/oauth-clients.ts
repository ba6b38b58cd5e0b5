import { pgTable, text as pgText, timestamp } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Clients registered through Dynamic Client Registration (RFC 7591). All clients are public
 * (`token_endpoint_auth_method: none`); list-valued fields are JSON arrays in text columns so
 * both dialects store them the same way. `metadata` keeps the whole registration request.
 */
export const oauthClientsPg = pgTable('oauth_clients', {
  clientId: pgText('client_id').primaryKey(),
  clientName: pgText('client_name'),
  redirectUris: pgText('redirect_uris').notNull(),
  grantTypes: pgText('grant_types').notNull(),
  responseTypes: pgText('response_types').notNull(),
  tokenEndpointAuthMethod: pgText('token_endpoint_auth_method').notNull().default('none'),
  applicationType: pgText('application_type'),
  scope: pgText('scope'),
  metadata: pgText('metadata').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
})

/** The `oauth_clients` table on SQLite (registered OAuth clients). */
export const oauthClientsSqlite = sqliteTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  clientName: text('client_name'),
  redirectUris: text('redirect_uris').notNull(),
  grantTypes: text('grant_types').notNull(),
  responseTypes: text('response_types').notNull(),
  tokenEndpointAuthMethod: text('token_endpoint_auth_method').notNull().default('none'),
  applicationType: text('application_type'),
  scope: text('scope'),
  metadata: text('metadata').notNull(),
  createdAt: integer('created_at', { mode: 'timestamp_ms' })
    .notNull()
    .$defaultFn(() => new Date()),
  lastUsedAt: integer('last_used_at', { mode: 'timestamp_ms' }),
})

/** A row of the `oauth_clients` table. */
export type OAuthClientRow = typeof oauthClientsPg.$inferSelect
