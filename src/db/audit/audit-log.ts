import {
  and,
  type Column,
  desc,
  eq,
  gte,
  inArray,
  like,
  lt,
  ne,
  notExists,
  type SQL,
  sql,
} from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { alias as pgAlias } from 'drizzle-orm/pg-core'
import { alias as sqliteAlias } from 'drizzle-orm/sqlite-core'
import type { Database, PostgresDatabase, SqliteDatabase } from '../database.ts'
import { mcpAuditPg, mcpAuditSqlite } from '../tables/mcp-audit.ts'

/**
 * How a data-tool call ended: `ok`; `refused` by the access policy, the person's grant, a
 * missing scope or tenant, the app's `authorize` hook or the approval gate (a forged, used or
 * another call's answer); `error` for anything else (invalid arguments, an unknown record, a
 * database failure). A call that needs approval also records each step of it:
 * `awaiting_approval` when it waits for the person, `approved` on the approval page (the
 * message says by whom and when) or `client_confirmed` (the app lets the client confirm it)
 * before the call's own entry, or how the wait ended without running: `denied` on the page,
 * `expired`, or `cancelled`.
 */
export const AUDIT_OUTCOMES = [
  'ok',
  'refused',
  'error',
  'awaiting_approval',
  'approved',
  'client_confirmed',
  'denied',
  'expired',
  'cancelled',
] as const
/** How a recorded call ended: one of `AUDIT_OUTCOMES`. */
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number]

/** One data-tool call, as the audit trail records it. */
export interface AuditEntry {
  /** When the call started. */
  at: Date
  userId: string | null
  tenantId: string | null
  /** The OAuth client the access token was issued to; null over stdio. */
  clientId: string | null
  /** `crud_list`, `crud_create`, `crud_update` or `crud_delete`. */
  tool: string
  /** The model's resource name (as the caller gave it when it names no model). */
  model: string
  /** The primary keys the call touched: the id of an update or delete, the created record's, the listed records'. */
  recordIds: (string | number)[]
  /** The names of the fields a create or update wrote (or tried to). */
  fields: string[]
  outcome: AuditOutcome
  durationMs: number
  /** Why a call was refused or failed: the tool error's text. */
  message: string | null
  /** The values written, credential fields left out; only when the app opts in. */
  values: Record<string, unknown> | null
}

/** An audit entry as stored, with its id. */
export interface AuditRecord extends AuditEntry {
  id: number
}

/** Which audit records `list` returns: filters, newest first, up to `limit`. */
export interface AuditQuery {
  userId?: string | undefined
  clientId?: string | undefined
  model?: string | undefined
  tool?: string | undefined
  outcome?: AuditOutcome | undefined
  /** Entries at or after this time. */
  since?: Date | undefined
  /** At most this many (default 50, at most 1000). */
  limit?: number | undefined
  /** Entries skipped, newest first (paging). */
  offset?: number | undefined
}

/** Reads the audit trail: what the connected-apps page and `kilnjs audit` use. */
export interface AuditReader {
  /** Matching entries, newest first. */
  list(query?: AuditQuery): Promise<AuditRecord[]>
}

/** The `kiln_mcp_audit` table. */
export interface AuditLog extends AuditReader {
  /** Writes entries in one statement. */
  insert(entries: readonly AuditEntry[]): Promise<void>
  /** Deletes the entries older than `before`; returns how many. */
  prune(before: Date): Promise<number>
  /**
   * Closes the approvals that were still awaiting the person at `before` and never got another
   * entry: each gets an `expired` entry at `now`. Returns how many (at most 100 a call).
   */
  closeExpiredApprovals(before: Date, now: Date): Promise<number>
}

/** The message of an `awaiting_approval` entry, without the approval it names. */
export const AWAITING_APPROVAL_MESSAGE = "Waiting for the user's approval"
const EXPIRED_APPROVAL_MESSAGE = 'The approval expired before the user decided'
const EXPIRED_BATCH = 100
/** The name the sweep's subquery gives the table, for the entries that close an approval. */
const CLOSING = 'closing'

/**
 * An audit message naming the approval it is about, by `ref` (a digest of its id, never the
 * id): every entry of one approval ends the same way, which is how the expiry sweep finds the
 * approvals that got no other entry.
 */
export function approvalMessage(text: string, ref: string): string {
  return `${text} (approval ${ref})`
}

/** The `expired` entries that close these open `awaiting_approval` ones. */
function expiredEntries(open: readonly AuditRecord[], now: Date): AuditEntry[] {
  return open.map(({ id: _, ...entry }) => ({
    ...entry,
    at: now,
    outcome: 'expired' as const,
    durationMs: now.getTime() - entry.at.getTime(),
    message:
      EXPIRED_APPROVAL_MESSAGE + (entry.message ?? '').slice(AWAITING_APPROVAL_MESSAGE.length),
    values: null,
  }))
}

/**
 * Awaiting entries that name an approval, older than `before`, with no later entry that names
 * the same approval (the person's decision, the call's end, an earlier sweep).
 */
function openApprovals(
  t: Table,
  other: Record<'id' | 'outcome' | 'occurredAt' | 'message', Column>,
  before: Date,
): SQL | undefined {
  const ref = sql`substr(${t.message}, ${AWAITING_APPROVAL_MESSAGE.length + 1})`
  return and(
    eq(t.outcome, 'awaiting_approval'),
    lt(t.occurredAt, before),
    like(t.message, approvalMessage(AWAITING_APPROVAL_MESSAGE, '%')),
    notExists(
      sql`(select 1 from ${t} as ${sql.identifier(CLOSING)} where ${and(
        ne(other.outcome, 'awaiting_approval'),
        gte(other.occurredAt, t.occurredAt),
        like(other.message, sql`'%' || ${ref}`),
      )})`,
    ),
  )
}

export const DEFAULT_AUDIT_LIMIT = 50
/** The most records one audit query returns. */
export const MAX_AUDIT_LIMIT = 1000

/**
 * The audit table of a database opened with `createDatabase` (run `migrate` first).
 * @example
 * ```ts
 * const log = createAuditLog(database)
 * await log.prune(new Date(Date.now() - 90 * 86_400_000)) // keep 90 days
 * ```
 */
export function createAuditLog(database: Database): AuditLog {
  if (!database?.dialect) throw new TypeError('createAuditLog: a database is required')
  return database.dialect === 'postgres' ? postgresLog(database) : sqliteLog(database)
}

type Row = typeof mcpAuditPg.$inferSelect

function toRow(entry: AuditEntry): Omit<Row, 'id'> {
  return {
    occurredAt: entry.at,
    userId: entry.userId,
    tenantId: entry.tenantId,
    clientId: entry.clientId,
    tool: entry.tool,
    model: entry.model,
    recordIds: JSON.stringify(entry.recordIds),
    fields: JSON.stringify(entry.fields),
    outcome: entry.outcome,
    durationMs: Math.max(0, Math.round(entry.durationMs)),
    message: entry.message,
    fieldValues: entry.values === null ? null : JSON.stringify(entry.values),
  }
}

function fromRow(row: Row): AuditRecord {
  return {
    id: Number(row.id),
    at: row.occurredAt,
    userId: row.userId,
    tenantId: row.tenantId,
    clientId: row.clientId,
    tool: row.tool,
    model: row.model,
    recordIds: parseJson(row.recordIds, []),
    fields: parseJson(row.fields, []),
    outcome: row.outcome as AuditOutcome,
    durationMs: row.durationMs,
    message: row.message,
    values: row.fieldValues === null ? null : parseJson(row.fieldValues, null),
  }
}

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

function paging(query: AuditQuery): { limit: number; offset: number } {
  const limit = query.limit ?? DEFAULT_AUDIT_LIMIT
  const offset = query.offset ?? 0
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
    throw new RangeError(`limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}`)
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError('offset must be an integer of at least 0')
  }
  return { limit, offset }
}

type Table = typeof mcpAuditPg | typeof mcpAuditSqlite

function conditions(table: Table, query: AuditQuery): SQL | undefined {
  const parts: SQL[] = []
  if (query.userId !== undefined) parts.push(eq(table.userId, query.userId))
  if (query.clientId !== undefined) parts.push(eq(table.clientId, query.clientId))
  if (query.model !== undefined) parts.push(eq(table.model, query.model))
  if (query.tool !== undefined) parts.push(eq(table.tool, query.tool))
  if (query.outcome !== undefined) parts.push(eq(table.outcome, query.outcome))
  if (query.since !== undefined) parts.push(gte(table.occurredAt, query.since))
  return parts.length === 0 ? undefined : and(...parts)
}

/** Both Postgres drivers (pg, PGlite) share this query surface. */
function pg(database: PostgresDatabase): PgDatabase<PgQueryResultHKT> {
  return database.db as PgDatabase<PgQueryResultHKT>
}

/** Rows deleted per statement while pruning, so one prune never holds a long lock. */
const PRUNE_BATCH = 5000

function postgresLog(database: PostgresDatabase): AuditLog {
  const db = pg(database)
  const t = mcpAuditPg
  return {
    async insert(entries) {
      if (entries.length === 0) return
      await db.insert(t).values(entries.map(toRow))
    },
    async list(query = {}) {
      const { limit, offset } = paging(query)
      const rows = await db
        .select()
        .from(t)
        .where(conditions(t, query))
        .orderBy(desc(t.occurredAt), desc(t.id))
        .limit(limit)
        .offset(offset)
      return rows.map(fromRow)
    },
    async prune(before) {
      let total = 0
      for (;;) {
        const old = db
          .select({ id: t.id })
          .from(t)
          .where(lt(t.occurredAt, before))
          .limit(PRUNE_BATCH)
        const deleted = await db.delete(t).where(inArray(t.id, old)).returning({ id: t.id })
        total += deleted.length
        if (deleted.length < PRUNE_BATCH) return total
      }
    },
    async closeExpiredApprovals(before, now) {
      const rows = await db
        .select()
        .from(t)
        .where(openApprovals(t, pgAlias(t, CLOSING), before))
        .limit(EXPIRED_BATCH)
      const closing = expiredEntries(rows.map(fromRow), now)
      if (closing.length > 0) await db.insert(t).values(closing.map(toRow))
      return closing.length
    },
  }
}

function sqliteLog(database: SqliteDatabase): AuditLog {
  const db = database.db
  const t = mcpAuditSqlite
  return {
    async insert(entries) {
      if (entries.length === 0) return
      db.insert(t).values(entries.map(toRow)).run()
    },
    async list(query = {}) {
      const { limit, offset } = paging(query)
      const rows = db
        .select()
        .from(t)
        .where(conditions(t, query))
        .orderBy(desc(t.occurredAt), desc(t.id))
        .limit(limit)
        .offset(offset)
        .all()
      return rows.map((row) => fromRow(row as Row))
    },
    async prune(before) {
      let total = 0
      for (;;) {
        const old = db
          .select({ id: t.id })
          .from(t)
          .where(lt(t.occurredAt, before))
          .limit(PRUNE_BATCH)
        const { changes } = db.delete(t).where(inArray(t.id, old)).run()
        total += changes
        if (changes < PRUNE_BATCH) return total
      }
    },
    async closeExpiredApprovals(before, now) {
      const rows = db
        .select()
        .from(t)
        .where(openApprovals(t, sqliteAlias(t, CLOSING), before))
        .limit(EXPIRED_BATCH)
        .all()
      const closing = expiredEntries(
        rows.map((row) => fromRow(row as Row)),
        now,
      )
      if (closing.length > 0) db.insert(t).values(closing.map(toRow)).run()
      return closing.length
    },
  }
}
