import { and, asc, eq, inArray, isNull, lte, or } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type { Database, PostgresDatabase } from '../../db/database.ts'
import { apiKeysPg, apiKeysSqlite } from '../../db/tables/api-keys.ts'
import type { ApiKeyInsertValues } from '../keys/insert-statement.ts'

/** An `api_keys` row without its hash: what listings and management functions return. */
export interface ApiKeyRecord {
  id: number
  name: string
  prefix: string
  /** The `scopes` column as stored: a JSON array of strings, or null. */
  scopes: string | null
  lastUsedAt: Date | null
  expiresAt: Date | null
  revokedAt: Date | null
  createdAt: Date
}

/** A row as verification reads it. */
export interface StoredApiKey extends ApiKeyRecord {
  hashedKey: string
}

/** Both Postgres drivers (pg, PGlite) share this query surface. */
function pg(database: PostgresDatabase): PgDatabase<PgQueryResultHKT> {
  return database.db as PgDatabase<PgQueryResultHKT>
}

const recordColumnsPg = {
  id: apiKeysPg.id,
  name: apiKeysPg.name,
  prefix: apiKeysPg.prefix,
  scopes: apiKeysPg.scopes,
  lastUsedAt: apiKeysPg.lastUsedAt,
  expiresAt: apiKeysPg.expiresAt,
  revokedAt: apiKeysPg.revokedAt,
  createdAt: apiKeysPg.createdAt,
}

const recordColumnsSqlite = {
  id: apiKeysSqlite.id,
  name: apiKeysSqlite.name,
  prefix: apiKeysSqlite.prefix,
  scopes: apiKeysSqlite.scopes,
  lastUsedAt: apiKeysSqlite.lastUsedAt,
  expiresAt: apiKeysSqlite.expiresAt,
  revokedAt: apiKeysSqlite.revokedAt,
  createdAt: apiKeysSqlite.createdAt,
}

/** Every row whose prefix is `prefix` (several keys may share one). */
export async function findKeysByPrefix(
  database: Database,
  prefix: string,
): Promise<StoredApiKey[]> {
  if (database.dialect === 'postgres') {
    return pg(database)
      .select({ ...recordColumnsPg, hashedKey: apiKeysPg.hashedKey })
      .from(apiKeysPg)
      .where(eq(apiKeysPg.prefix, prefix))
  }
  return database.db
    .select({ ...recordColumnsSqlite, hashedKey: apiKeysSqlite.hashedKey })
    .from(apiKeysSqlite)
    .where(eq(apiKeysSqlite.prefix, prefix))
    .all()
}

export async function findKeyById(
  database: Database,
  id: number,
): Promise<ApiKeyRecord | undefined> {
  if (database.dialect === 'postgres') {
    const rows = await pg(database)
      .select(recordColumnsPg)
      .from(apiKeysPg)
      .where(eq(apiKeysPg.id, id))
    return rows[0]
  }
  return database.db
    .select(recordColumnsSqlite)
    .from(apiKeysSqlite)
    .where(eq(apiKeysSqlite.id, id))
    .get()
}

/** Every key, oldest first, without hashes. */
export async function selectKeys(database: Database): Promise<ApiKeyRecord[]> {
  if (database.dialect === 'postgres') {
    return pg(database).select(recordColumnsPg).from(apiKeysPg).orderBy(asc(apiKeysPg.id))
  }
  return database.db
    .select(recordColumnsSqlite)
    .from(apiKeysSqlite)
    .orderBy(asc(apiKeysSqlite.id))
    .all()
}

export async function insertKeyRow(
  database: Database,
  row: ApiKeyInsertValues,
): Promise<ApiKeyRecord> {
  if (database.dialect === 'postgres') {
    const [inserted] = await pg(database).insert(apiKeysPg).values(row).returning(recordColumnsPg)
    if (!inserted) throw new Error('INSERT INTO api_keys returned no row')
    return inserted
  }
  const inserted = database.db
    .insert(apiKeysSqlite)
    .values(row)
    .returning(recordColumnsSqlite)
    .get()
  return inserted
}

/** Sets `revoked_at` on one key unless it is already revoked; returns the row afterwards. */
export async function markRevoked(
  database: Database,
  id: number,
  at: Date,
): Promise<{ record: ApiKeyRecord; changed: boolean } | undefined> {
  if (database.dialect === 'postgres') {
    const rows = await pg(database)
      .update(apiKeysPg)
      .set({ revokedAt: at })
      .where(and(eq(apiKeysPg.id, id), isNull(apiKeysPg.revokedAt)))
      .returning(recordColumnsPg)
    if (rows[0]) return { record: rows[0], changed: true }
  } else {
    const row = database.db
      .update(apiKeysSqlite)
      .set({ revokedAt: at })
      .where(and(eq(apiKeysSqlite.id, id), isNull(apiKeysSqlite.revokedAt)))
      .returning(recordColumnsSqlite)
      .get()
    if (row) return { record: row, changed: true }
  }
  const existing = await findKeyById(database, id)
  return existing ? { record: existing, changed: false } : undefined
}

/**
 * Writes `last_used_at = at` for the keys, skipping rows another instance touched less
 * than `minIntervalMs` before `at`: across all instances a key's row is written at most
 * once per interval.
 */
export async function writeLastUsed(
  database: Database,
  ids: number[],
  at: Date,
  minIntervalMs: number,
): Promise<void> {
  if (ids.length === 0) return
  const threshold = new Date(at.getTime() - minIntervalMs)
  if (database.dialect === 'postgres') {
    await pg(database)
      .update(apiKeysPg)
      .set({ lastUsedAt: at })
      .where(
        and(
          inArray(apiKeysPg.id, ids),
          or(isNull(apiKeysPg.lastUsedAt), lte(apiKeysPg.lastUsedAt, threshold)),
        ),
      )
    return
  }
  database.db
    .update(apiKeysSqlite)
    .set({ lastUsedAt: at })
    .where(
      and(
        inArray(apiKeysSqlite.id, ids),
        or(isNull(apiKeysSqlite.lastUsedAt), lte(apiKeysSqlite.lastUsedAt, threshold)),
      ),
    )
    .run()
}
