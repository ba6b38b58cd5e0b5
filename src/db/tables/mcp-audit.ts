import {
  bigserial,
  integer as pgInteger,
  pgTable,
  text as pgText,
  timestamp,
} from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * One row per data-tool call (`crud_list`, `crud_create`, `crud_update`, `crud_delete`)
 * through `/mcp`, stdio or a `createCrud` given an audit trail. List-valued columns are JSON
 * arrays in text columns, so both dialects store them the same way; `field_values` is filled
 * only when the app opts in (`createAuditTrail({ values: true })`).
 */
export const mcpAuditPg = pgTable('kiln_mcp_audit', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
  userId: pgText('user_id'),
  tenantId: pgText('tenant_id'),
  clientId: pgText('client_id'),
  tool: pgText('tool').notNull(),
  model: pgText('model').notNull(),
  recordIds: pgText('record_ids').notNull(),
  fields: pgText('fields').notNull(),
  outcome: pgText('outcome').notNull(),
  durationMs: pgInteger('duration_ms').notNull(),
  message: pgText('message'),
  fieldValues: pgText('field_values'),
})

/** The `kiln_mcp_audit` table on SQLite (the audit trail of data-tool calls). */
export const mcpAuditSqlite = sqliteTable('kiln_mcp_audit', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  occurredAt: integer('occurred_at', { mode: 'timestamp_ms' }).notNull(),
  userId: text('user_id'),
  tenantId: text('tenant_id'),
  clientId: text('client_id'),
  tool: text('tool').notNull(),
  model: text('model').notNull(),
  recordIds: text('record_ids').notNull(),
  fields: text('fields').notNull(),
  outcome: text('outcome').notNull(),
  durationMs: integer('duration_ms').notNull(),
  message: text('message'),
  fieldValues: text('field_values'),
})
