import { type SQL, sql } from 'drizzle-orm'
import { type Clock, systemClock } from '../core/clock.ts'
import type { KeyValueStore, SetOptions } from '../core/kv/key-value-store.ts'
import type { SharedState } from '../core/shared-state.ts'
import type { Database } from './database.ts'

/** Every this many writes, one bounded sweep of expired entries. */
const SWEEP_EVERY = 100
/** Most expired entries one sweep removes: a write stays cheap. */
const SWEEP_LIMIT = 100

/**
 * A `KeyValueStore` in the database's `kiln_state` table (kiln migration `0006_kiln_state` on
 * PostgreSQL, `0005_kiln_state` on SQLite): for state that must outlive a restart when there is
 * no Redis (the OAuth server's token families, grants and revocations; sessions if the app
 * wants). Each operation is one statement, atomic on its own, so many instances over one
 * database share it as they would Redis. Expired entries read as absent and are swept in
 * bounded batches as writes come.
 * @example
 * ```ts
 * const store = new DatabaseKeyValueStore(database)
 * await store.set('report:last-run', new Date().toISOString())
 * ```
 */
export class DatabaseKeyValueStore implements KeyValueStore {
  readonly #database: Database
  readonly #clock: Clock
  #writes = 0

  constructor(database: Database, options: { clock?: Clock } = {}) {
    this.#database = database
    this.#clock = options.clock ?? systemClock
  }

  async get(key: string): Promise<string | undefined> {
    const now = this.#clock.now()
    const rows = await this.#rows<{ value: string }>(
      sql`select value from kiln_state where key = ${key} and (expires_at is null or expires_at > ${now})`,
    )
    return rows[0]?.value
  }

  async set(key: string, value: string, options?: SetOptions): Promise<void> {
    await this.#run(
      sql`insert into kiln_state (key, value, expires_at) values (${key}, ${value}, ${this.#expiry(options)})
          on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`,
    )
    await this.#written()
  }

  async setIfAbsent(key: string, value: string, options?: SetOptions): Promise<boolean> {
    const rows = await this.#rows(
      sql`insert into kiln_state (key, value, expires_at) values (${key}, ${value}, ${this.#expiry(options)})
          on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at
          where ${this.#expired()}
          returning key`,
    )
    await this.#written()
    return rows.length === 1
  }

  async take(key: string): Promise<string | undefined> {
    const rows = await this.#rows<{ value: string; expires_at: number | string | null }>(
      sql`delete from kiln_state where key = ${key} returning value, expires_at`,
    )
    const row = rows[0]
    if (!row) return undefined
    const expiresAt = row.expires_at === null ? undefined : Number(row.expires_at)
    return expiresAt !== undefined && expiresAt <= this.#clock.now() ? undefined : row.value
  }

  async delete(key: string): Promise<void> {
    await this.#run(sql`delete from kiln_state where key = ${key}`)
  }

  async deleteIf(key: string, value: string): Promise<boolean> {
    const rows = await this.#rows(
      sql`delete from kiln_state where key = ${key} and value = ${value}
          and (expires_at is null or expires_at > ${this.#clock.now()}) returning key`,
    )
    return rows.length === 1
  }

  async replaceIf(
    key: string,
    current: string,
    next: string,
    options?: SetOptions,
  ): Promise<boolean> {
    const rows = await this.#rows(
      sql`update kiln_state set value = ${next}, expires_at = ${this.#expiry(options)}
          where key = ${key} and value = ${current}
          and (expires_at is null or expires_at > ${this.#clock.now()}) returning key`,
    )
    return rows.length === 1
  }

  async increment(key: string, by = 1, options?: SetOptions): Promise<number> {
    const postgres = this.#database.dialect === 'postgres'
    // PostgreSQL refuses to cast a value that is not an integer; SQLite reads it as 0, so there
    // a value that does not read back as itself fails the statement (abs() of the smallest
    // integer is SQLite's integer overflow error; the row's length keeps it from being
    // evaluated once, as a constant, when the statement is prepared).
    const added = postgres
      ? sql`cast(cast(kiln_state.value as bigint) + ${by} as text)`
      : sql`cast(case when cast(cast(kiln_state.value as integer) as text) = kiln_state.value
              then cast(kiln_state.value as integer) + cast(${by} as integer)
              else abs(-9223372036854775807 - 1 + 0 * length(kiln_state.value)) end as text)`
    const rows = await this.#rows<{ value: string }>(
      sql`insert into kiln_state (key, value, expires_at) values (${key}, ${String(by)}, ${this.#expiry(options)})
          on conflict (key) do update set
            value = case when ${this.#expired()} then excluded.value
                    else ${added} end,
            expires_at = case when ${this.#expired()} then excluded.expires_at
                         else kiln_state.expires_at end
          returning value`,
    )
    await this.#written()
    return Number(rows[0]?.value)
  }

  async close(): Promise<void> {}

  #expiry(options?: SetOptions): number | null {
    return options?.ttlMs === undefined ? null : this.#clock.now() + options.ttlMs
  }

  /** The stored row has expired (in an upsert: the row already there). */
  #expired(): SQL {
    return sql`(kiln_state.expires_at is not null and kiln_state.expires_at <= ${this.#clock.now()})`
  }

  async #written(): Promise<void> {
    this.#writes = (this.#writes + 1) % SWEEP_EVERY
    if (this.#writes !== 0) return
    const now = this.#clock.now()
    await this.#run(
      sql`delete from kiln_state where key in (select key from kiln_state
          where expires_at is not null and expires_at <= ${now} limit ${SWEEP_LIMIT})`,
    )
  }

  async #run(query: SQL): Promise<void> {
    const database = this.#database
    if (database.dialect === 'sqlite') database.db.run(query)
    else await database.db.execute(query)
  }

  async #rows<Row>(query: SQL): Promise<Row[]> {
    const database = this.#database
    if (database.dialect === 'sqlite') return database.db.all<Row>(query)
    const result = (await database.db.execute(query)) as unknown as { rows: Row[] }
    return result.rows
  }
}

/**
 * Where state that must outlive a restart lives: the shared state's store on Redis; without
 * Redis, the database (`DatabaseKeyValueStore`), not this process's memory. Pass it as the
 * OAuth server's and the bearer validator's `store`.
 * @example
 * ```ts
 * const store = durableState(shared, database)
 * const validator = createBearerValidator({
 *   secret: oauthConfig.secret,
 *   issuer: oauthConfig.issuer,
 *   resource: `${oauthConfig.issuer}/mcp`,
 *   store,
 * })
 * ```
 */
export function durableState(shared: Pick<SharedState, 'kind' | 'kv'>, database: Database) {
  return shared.kind === 'redis' ? shared.kv : new DatabaseKeyValueStore(database)
}
