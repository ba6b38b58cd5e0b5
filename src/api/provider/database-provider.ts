import { hash } from 'node:crypto'
import { type Clock, systemClock } from '../../core/clock.ts'
import { DependencyError } from '../../core/errors.ts'
import type { Logger } from '../../core/logger.ts'
import { missingTable } from '../../core/missing-table.ts'
import type { Database } from '../../db/database.ts'
import { ApiKeyRejectedError, type ApiKeyRejection } from '../errors.ts'
import { digestMatches, parseApiKey } from '../keys/api-key.ts'
import type { ApiKeyInfo, ApiKeyProvider } from './api-key-provider.ts'
import { type KeyChangeFeed, openKeyChangeFeed } from './change-feed.ts'
import { findKeysByPrefix, type StoredApiKey, writeLastUsed } from './key-store.ts'
import { LastUsedRecorder } from './last-used.ts'
import { onLocalKeyChange } from './local-changes.ts'
import { parseScopesColumn } from './scopes.ts'
import { VerifiedKeyCache } from './verified-cache.ts'

/** Options of `createDatabaseApiKeyProvider`. */
export interface DatabaseApiKeyProviderOptions {
  /** The database holding `api_keys` (Postgres on pg or PGlite, or SQLite). */
  database: Database
  clock?: Clock
  /** Receives data problems (a corrupted `scopes` column) and background failures. */
  logger?: Logger
  /**
   * How long a verified key may be answered from memory: the bound for changes the change
   * feed cannot see (see docs/api-keys.md). 0 turns the cache off. Default 10 s; 0 on PGlite,
   * whose LISTEN does not hear changes made through its shared socket (the CLI while the app
   * runs), and whose in-process lookups are cheap.
   */
  cacheTtlMs?: number
  /** Most keys held in the cache. Default 10,000. */
  cacheMaxEntries?: number
  /** A key's `last_used_at` is written at most once per interval. Default 60 s. */
  lastUsedIntervalMs?: number
  /** Delay before the batched `last_used_at` write. Default 1 s. */
  lastUsedFlushDelayMs?: number
}

/** An `ApiKeyProvider` over the `api_keys` table, from `createDatabaseApiKeyProvider`. */
export interface DatabaseApiKeyProvider extends ApiKeyProvider {
  /** Writes pending `last_used_at` updates now. */
  flush(): Promise<void>
  /** Drops cached verifications: one key's, or all. */
  invalidate(id?: number): void
  /** For health checks and tests: cached keys, and whether changes are being heard. */
  status(): { cacheEntries: number; changeFeed: 'live' | 'down' | 'off' }
  /** Flushes, stops listening for changes and drops the cache. The database stays open. */
  close(): Promise<void>
}

const DEFAULT_CACHE_TTL_MS = 10_000

/**
 * Verifies keys against `api_keys`, in the order the spec gives: look the key up by its
 * 16-character prefix, skip rows that are revoked, then rows that have expired, then compare
 * SHA-256 digests in constant time; several rows may share a prefix and each is checked.
 *
 * Successful verifications are cached in memory by the key's SHA-256, and dropped the moment
 * the row changes (Postgres triggers + LISTEN, SQLite `data_version`, in-process revocation);
 * while the change feed is not connected, nothing is cached. `last_used_at` is written after
 * the response, at most once a minute per key.
 * @example
 * ```ts
 * const apiKeys = createDatabaseApiKeyProvider({ database, logger })
 * ```
 */
export function createDatabaseApiKeyProvider(
  options: DatabaseApiKeyProviderOptions,
): DatabaseApiKeyProvider {
  const { database, logger } = options
  if (!database || (database.dialect !== 'postgres' && database.dialect !== 'sqlite')) {
    throw new TypeError('createDatabaseApiKeyProvider: `database` must come from createDatabase()')
  }
  const clock = options.clock ?? systemClock
  const ttlMs = cacheTtlOf(options)
  const cacheEnabled = ttlMs > 0
  const cache = new VerifiedKeyCache(ttlMs, options.cacheMaxEntries ?? 10_000)
  /** Bumped on every change notice: a lookup that raced a change must not be cached. */
  let generation = 0
  const onChange = (id: number | undefined) => {
    generation++
    cache.invalidate(id)
  }
  const feed: KeyChangeFeed | undefined = cacheEnabled
    ? openKeyChangeFeed(database, onChange, logger)
    : undefined
  const stopLocal = onLocalKeyChange(database, onChange)
  const lastUsed = lastUsedRecorder(options, clock)
  const inflight = new Map<string, Promise<ApiKeyInfo>>()

  async function lookUp(prefix: string, digest: Buffer, cacheKey: string): Promise<ApiKeyInfo> {
    const trustedBefore = feed?.trusted() ?? false
    const generationBefore = generation
    let rows: StoredApiKey[]
    try {
      rows = await findKeysByPrefix(database, prefix)
    } catch (cause) {
      // Not a failing database but one not migrated yet: the error handler answers 503 and
      // says once what to run.
      if (missingTable(cause) !== undefined) throw cause
      throw new DependencyError('Internal Server Error', { cause })
    }
    const now = clock.now()
    const { row, info } = matchingKey(rows, digest, now, logger)
    lastUsed.seed(row.id, row.lastUsedAt)
    if (trustedBefore && feed?.trusted() && generation === generationBefore) {
      cache.set(cacheKey, info, row.expiresAt?.getTime(), now)
    }
    return info
  }

  return {
    async verifyKey(rawKey: string): Promise<ApiKeyInfo> {
      const { prefix } = parseApiKey(rawKey)
      // One-shot hash: no Hash object per request (this runs on every authenticated request).
      const cacheKey = hash('sha256', rawKey, 'base64')
      if (feed?.trusted()) {
        const cached = cache.get(cacheKey, clock.now())
        if (cached) {
          lastUsed.used(cached.id)
          return cached
        }
      }
      const info = await shared(inflight, cacheKey, () =>
        lookUp(prefix, Buffer.from(cacheKey, 'base64'), cacheKey),
      )
      lastUsed.used(info.id)
      return info
    },
    flush: () => lastUsed.flush(),
    invalidate(id?: number) {
      onChange(id)
    },
    status() {
      const changeFeed = feed ? (feed.trusted() ? 'live' : 'down') : 'off'
      return { cacheEntries: cache.size, changeFeed }
    },
    async close() {
      stopLocal()
      await lastUsed.flush()
      await feed?.close()
      cache.invalidate()
    },
  }
}

/** One lookup per key at a time: concurrent requests with the same key share it. */
function shared<T>(inflight: Map<string, Promise<T>>, key: string, start: () => Promise<T>) {
  let pending = inflight.get(key)
  if (!pending) {
    pending = start().finally(() => inflight.delete(key))
    inflight.set(key, pending)
  }
  return pending
}

/** How long a verified key is cached: nothing on the embedded database, which has no change feed. */
function cacheTtlOf({ database, cacheTtlMs }: DatabaseApiKeyProviderOptions): number {
  const embedded = database.dialect === 'postgres' && database.driver === 'pglite'
  const ttlMs = cacheTtlMs ?? (embedded ? 0 : DEFAULT_CACHE_TTL_MS)
  if (!Number.isFinite(ttlMs) || ttlMs < 0) {
    throw new TypeError('createDatabaseApiKeyProvider: cacheTtlMs must be a number >= 0')
  }
  return ttlMs
}

function lastUsedRecorder(options: DatabaseApiKeyProviderOptions, clock: Clock): LastUsedRecorder {
  const { database, logger } = options
  return new LastUsedRecorder({
    clock,
    logger,
    intervalMs: options.lastUsedIntervalMs ?? 60_000,
    flushDelayMs: options.lastUsedFlushDelayMs ?? 1_000,
    write: (ids, at, intervalMs) => writeLastUsed(database, ids, at, intervalMs),
  })
}

/**
 * The stored key (of those sharing the prefix) whose digest matches, live at `now`; otherwise
 * the refusal that says why: unknown, mismatch, revoked or expired.
 */
function matchingKey(
  rows: StoredApiKey[],
  digest: Buffer,
  now: number,
  logger: Logger | undefined,
): { row: StoredApiKey; info: ApiKeyInfo } {
  let sawRevoked = false
  let sawCompared = false
  for (const row of rows) {
    if (row.revokedAt !== null) {
      sawRevoked = true
      continue
    }
    if (row.expiresAt !== null && row.expiresAt.getTime() <= now) continue
    sawCompared = true
    if (!digestMatches(row.hashedKey, digest)) continue
    const scopes = parseScopesColumn(row.scopes)
    if (!scopes) {
      logger?.error(
        { keyId: row.id },
        `API key ${row.id} has a scopes column that is not a JSON array of strings; the key is refused until it is fixed`,
      )
      throw new ApiKeyRejectedError('invalid_scopes', row.id)
    }
    const info: ApiKeyInfo = Object.freeze({
      id: row.id,
      name: row.name,
      scopes: Object.freeze(scopes) as string[],
    })
    return { row, info }
  }
  const reason: ApiKeyRejection =
    rows.length === 0 ? 'unknown' : sawCompared ? 'mismatch' : sawRevoked ? 'revoked' : 'expired'
  throw new ApiKeyRejectedError(reason, rows.length === 1 ? rows[0]?.id : undefined)
}
