import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import { MemoryKeyValueStore } from '../../core/kv/memory-store.ts'

/**
 * Keeps the list envelope's exact `total` affordable. `count(*)` reads the whole table (on
 * Postgres, 100,000 rows cost far more than the page itself), so counts are cached per table:
 * - writes through the API call `invalidate`, so the API's own changes show at once;
 * - a cached count lives `ttlMs` (default 5 s), which bounds how long changes made outside
 *   the API (other code, SQL) can go unseen;
 * - a page that is not full (the last page, or a small table) gives the total exactly
 *   without any count;
 * - concurrent misses in one process share one count query.
 * With a shared KeyValueStore (Redis) every instance sees the same counts and invalidations.
 */
export interface RecordCounter {
  /**
   * The total number of records of `table`, given the page just read. `count` is awaited only
   * when needed: pass a lazy Drizzle `db.$count(table)` or a function.
   */
  total(
    table: string,
    page: { page: number; perPage: number; offset: number },
    rowsOnPage: number,
    count: PromiseLike<number> | (() => PromiseLike<number>),
  ): Promise<number>
  /**
   * A cached count of some of `table`'s records, `variant` naming which (a digest of a list's
   * filters): cached and invalidated with the table's total, without the full-page shortcut.
   */
  count(
    table: string,
    variant: string,
    count: PromiseLike<number> | (() => PromiseLike<number>),
  ): Promise<number>
  /** Forgets the cached count of `table` after a write that adds or removes records. */
  invalidate(table: string): Promise<void>
}

/** Options of `createRecordCounter`. */
export interface RecordCounterOptions {
  /** Where counts live; a shared store (Redis) for several instances. Default: memory. */
  store?: KeyValueStore
  /** How long a cached count is trusted. 0 counts on every request. */
  ttlMs?: number
  /** Key prefix inside the store. */
  prefix?: string
}

type Count = PromiseLike<number> | (() => PromiseLike<number>)

/** A count query (a lazy Drizzle `$count`, which runs when awaited) or a function making one. */
function run(count: Count): PromiseLike<number> {
  return typeof count === 'function' ? count() : count
}

/**
 * The `RecordCounter` of the list answers: counts cached per table in `store` (memory by
 * default; the shared store, so instances agree).
 * @example
 * ```ts
 * const counts = createRecordCounter({ store: shared.kv }) // passed to apiRoutes
 * ```
 */
export function createRecordCounter({
  store = new MemoryKeyValueStore(),
  ttlMs = 5_000,
  prefix = 'kiln:count:',
}: RecordCounterOptions = {}): RecordCounter {
  const inFlight = new Map<string, Promise<number>>()
  // A count is stored under the table's current version; `invalidate` bumps the version, so a
  // count that raced with a write is stored under a version nobody reads any more.
  const versionKey = (table: string) => `${prefix}${table}:version`

  async function countOnce(table: string, count: Count, variant = ''): Promise<number> {
    if (ttlMs <= 0) return Number(await run(count))
    const version = (await store.get(versionKey(table))) ?? '0'
    const key = `${prefix}${table}:${version}${variant ? `:${variant}` : ''}`
    const cached = await store.get(key)
    if (cached !== undefined) return Number(cached)
    const shared = inFlight.get(key)
    if (shared) return shared
    const pending = (async () => {
      const total = Number(await run(count))
      await store.set(key, String(total), { ttlMs })
      return total
    })()
    inFlight.set(key, pending)
    try {
      return await pending
    } finally {
      inFlight.delete(key)
    }
  }

  return {
    async total(table, page, rowsOnPage, count) {
      // A page that is not full ends the table: its end is the total, no count needed.
      if (rowsOnPage < page.perPage && (rowsOnPage > 0 || page.page === 1)) {
        return page.offset + rowsOnPage
      }
      return countOnce(table, count)
    },
    count(table, variant, count) {
      return countOnce(table, count, variant)
    },
    async invalidate(table) {
      await store.increment(versionKey(table), 1)
    },
  }
}
