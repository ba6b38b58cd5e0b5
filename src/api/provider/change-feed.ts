import type BetterSqlite3 from 'better-sqlite3'
import type { Logger } from '../../core/logger.ts'
import { type Database, sqliteClient } from '../../db/database.ts'
import { type ListenQuery, listenTo } from '../../db/listen.ts'

/** The channel the `api_keys` triggers notify (see the api_keys migration). */
export const API_KEYS_CHANNEL = 'kiln_api_keys'

/** Told which key changed; `undefined` means "any key may have changed". */
export type KeyChangeListener = (id: number | undefined) => void

/**
 * Tells a verification cache when rows of `api_keys` change, and whether it can be trusted
 * right now. A cache may only be read or filled while `trusted()` is true.
 */
export interface KeyChangeFeed {
  /** Cheap, called on every request. May report changes synchronously before answering. */
  trusted(): boolean
  close(): Promise<void>
}

/**
 * The change feed for a database:
 * - Postgres: LISTEN on `kiln_api_keys` (`listenTo`: PGlite's in-process LISTEN, or a pg
 *   connection of its own on the direct URL); the table's triggers NOTIFY it on every change of
 *   a column verification reads, whoever makes the change (kiln, the CLI, or SQL typed by
 *   hand). While that connection is down nothing is trusted.
 * - SQLite: `PRAGMA data_version`, which changes whenever another connection (another
 *   process, the CLI, the sqlite3 shell) commits to the file.
 *
 * Behind a transaction pooler without a direct URL the feed is never trusted: nothing is cached.
 */
export function openKeyChangeFeed(
  database: Database,
  onChange: KeyChangeListener,
  logger: Logger | undefined,
): KeyChangeFeed {
  if (database.dialect === 'sqlite') {
    return new SqliteDataVersionFeed(sqliteClient(database), onChange)
  }
  let warned = false
  const listening = listenTo(database, {
    channel: API_KEYS_CHANNEL,
    name: LISTENER_NAME,
    notify: (payload) => onChange(parseChangePayload(payload)),
    // Anything cached while the feed was down may be stale, and nothing is cached while it is.
    state: () => onChange(undefined),
    async ready(query: ListenQuery) {
      const [row] = await query<TriggersRow>(TRIGGERS_SQL)
      if (row?.n === 2) return true
      if (!warned && row?.table) {
        logger?.warn(MISSING_TRIGGERS)
        warned = true
      }
      return false
    },
    logger,
    messages: {
      down: 'API key change feed is down: every request is verified against the database until it reconnects',
      lost: 'API key change feed lost its connection: verifying every request until it reconnects',
      back: 'API key change feed reconnected',
    },
  })
  if (!listening) return { trusted: () => false, close: async () => {} }
  return { trusted: () => listening.listening(), close: () => listening.close() }
}

/** `application_name` of the LISTEN connection, to find it in `pg_stat_activity`. */
export const LISTENER_NAME = 'kiln api_keys listener'

/**
 * Both triggers of the api_keys migration present: only then do changes reach the feed. Without
 * the table itself the database is not migrated at all, which the first request reports (503
 * and one log line), so the feed then waits without a warning of its own.
 */
const TRIGGERS_SQL = `SELECT to_regclass('api_keys') IS NOT NULL AS "table", (
    SELECT count(*)::int FROM pg_trigger
    WHERE tgrelid = to_regclass('api_keys')
      AND tgname IN ('api_keys_notify_update', 'api_keys_notify_delete')
  ) AS n`

interface TriggersRow {
  table: boolean
  n: number
}
const MISSING_TRIGGERS =
  'API key cache off: the api_keys change triggers are missing (run `kilnjs migrate`); every request is verified against the database'

export function parseChangePayload(payload: string | undefined): number | undefined {
  if (payload === undefined || !/^\d{1,15}$/.test(payload)) return undefined
  return Number(payload)
}

class SqliteDataVersionFeed implements KeyChangeFeed {
  readonly #statement: { get(): unknown } | undefined
  readonly #onChange: KeyChangeListener
  #version: unknown

  constructor(client: BetterSqlite3.Database | undefined, onChange: KeyChangeListener) {
    this.#onChange = onChange
    try {
      this.#statement = client?.prepare('PRAGMA data_version').pluck()
      this.#version = this.#statement?.get()
    } catch {
      this.#statement = undefined
    }
  }

  trusted(): boolean {
    if (!this.#statement) return false
    let version: unknown
    try {
      version = this.#statement.get()
    } catch {
      return false
    }
    if (version !== this.#version) {
      this.#version = version
      this.#onChange(undefined)
    }
    return true
  }

  async close(): Promise<void> {}
}
