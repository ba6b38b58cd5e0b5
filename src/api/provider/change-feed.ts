import type { Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'
import type { Logger } from '../../core/logger.ts'
import { requireOptional } from '../../core/optional-package.ts'
import { type Database, sessionConnectionConfig, sqliteClient } from '../../db/database.ts'

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
 * - Postgres on pg: a dedicated connection LISTENs on `kiln_api_keys`; the table's triggers
 *   NOTIFY it on every change of a column verification reads, whoever makes the change
 *   (kiln, the CLI, or SQL typed by hand). While that connection is down nothing is trusted.
 * - PGlite: the same triggers, through PGlite's in-process LISTEN.
 * - SQLite: `PRAGMA data_version`, which changes whenever another connection (another
 *   process, the CLI, the sqlite3 shell) commits to the file.
 *
 * Behind a transaction pooler a LISTEN would stay on whichever server connection ran it, heard
 * by whoever holds that connection next: the feed listens on the direct URL (`directUrl` of
 * `createDatabase`), and without one it is never trusted, so nothing is cached.
 */
export function openKeyChangeFeed(
  database: Database,
  onChange: KeyChangeListener,
  logger: Logger | undefined,
): KeyChangeFeed {
  if (database.dialect === 'sqlite') {
    return new SqliteDataVersionFeed(sqliteClient(database), onChange)
  }
  if (database.driver === 'pglite' && database.pglite) {
    return new PgliteListenFeed(database.pglite, onChange, logger)
  }
  const config = sessionConnectionConfig(database)
  if (!config) return { trusted: () => false, close: async () => {} }
  return new PgListenFeed(config, onChange, logger)
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
const TRIGGER_RECHECK_MS = 30_000
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

class PgliteListenFeed implements KeyChangeFeed {
  readonly #pglite: PGlite
  readonly #onChange: KeyChangeListener
  readonly #logger: Logger | undefined
  #listening = false
  #unlisten: (() => Promise<void>) | undefined
  #closed = false
  #recheck: NodeJS.Timeout | undefined
  #warned = false

  constructor(pglite: PGlite, onChange: KeyChangeListener, logger: Logger | undefined) {
    this.#pglite = pglite
    this.#onChange = onChange
    this.#logger = logger
    pglite
      .listen(API_KEYS_CHANNEL, (payload) => onChange(parseChangePayload(payload)))
      .then(async (unlisten) => {
        if (this.#closed) return unlisten()
        this.#unlisten = unlisten
        await this.#checkTriggers()
      })
      .catch((error: unknown) => {
        logger?.warn({ err: error }, 'API key cache off: LISTEN failed on PGlite')
      })
  }

  async #checkTriggers(): Promise<void> {
    if (this.#closed || this.#pglite.closed) return
    const { rows } = await this.#pglite.query<TriggersRow>(TRIGGERS_SQL)
    if (rows[0]?.n === 2) {
      this.#listening = true
      this.#onChange(undefined)
      return
    }
    if (!this.#warned && rows[0]?.table) {
      this.#logger?.warn(MISSING_TRIGGERS)
      this.#warned = true
    }
    this.#recheck = setTimeout(() => void this.#checkTriggers().catch(() => {}), TRIGGER_RECHECK_MS)
    this.#recheck.unref()
  }

  trusted(): boolean {
    return this.#listening && !this.#pglite.closed
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listening = false
    if (this.#recheck) clearTimeout(this.#recheck)
    const unlisten = this.#unlisten
    this.#unlisten = undefined
    if (unlisten && !this.#pglite.closed) await unlisten().catch(() => {})
  }
}

/**
 * LISTEN on its own connection (a pooled one would be handed to queries). The socket is
 * unreferenced, so an app that forgets `provider.close()` still exits; on any error the
 * cache stops being trusted, everything cached is dropped, and the feed reconnects.
 */
class PgListenFeed implements KeyChangeFeed {
  readonly #config: pg.ClientConfig
  readonly #onChange: KeyChangeListener
  readonly #logger: Logger | undefined
  #client: pg.Client | undefined
  #listening = false
  #closed = false
  #failures = 0
  #retry: NodeJS.Timeout | undefined
  #warnedTriggers = false

  constructor(config: pg.ClientConfig, onChange: KeyChangeListener, logger: Logger | undefined) {
    this.#config = config
    this.#onChange = onChange
    this.#logger = logger
    void this.#connect()
  }

  trusted(): boolean {
    return this.#listening
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    // Only reached on a database opened by pg, so the package is there.
    const { Client } = requireOptional<typeof import('pg')>('pg', 'PostgreSQL')
    const client = new Client({
      ...this.#config,
      connectionTimeoutMillis: 5_000,
      application_name: LISTENER_NAME,
    })
    this.#client = client
    client.on('error', () => this.#lost(client))
    client.on('end', () => this.#lost(client))
    client.on('notification', (message) => {
      if (message.channel === API_KEYS_CHANNEL) this.#onChange(parseChangePayload(message.payload))
    })
    try {
      await client.connect()
      const socket = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream
      socket?.unref?.()
      await client.query(`LISTEN ${API_KEYS_CHANNEL}`)
      const { rows } = await client.query<TriggersRow>(TRIGGERS_SQL)
      if (this.#closed || this.#client !== client) {
        await client.end().catch(() => {})
        return
      }
      if (rows[0]?.n !== 2) {
        if (!this.#warnedTriggers && rows[0]?.table) {
          this.#logger?.warn(MISSING_TRIGGERS)
          this.#warnedTriggers = true
        }
        this.#client = undefined
        await client.end().catch(() => {})
        this.#retry = setTimeout(() => void this.#connect(), TRIGGER_RECHECK_MS)
        this.#retry.unref()
        return
      }
      if (this.#failures > 0) this.#logger?.info('API key change feed reconnected')
      this.#failures = 0
      this.#listening = true
      // Anything cached while the feed was down may be stale.
      this.#onChange(undefined)
    } catch (error) {
      if (this.#failures === 0 && !this.#closed) {
        this.#logger?.warn(
          { err: error },
          'API key change feed is down: every request is verified against the database until it reconnects',
        )
      }
      this.#lost(client)
    }
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return
    this.#client = undefined
    const wasListening = this.#listening
    this.#listening = false
    this.#onChange(undefined)
    client.end().catch(() => {})
    if (this.#closed) return
    if (wasListening) {
      this.#logger?.warn(
        'API key change feed lost its connection: verifying every request until it reconnects',
      )
    }
    this.#failures++
    const delay = Math.min(250 * 2 ** Math.min(this.#failures, 5), 5_000)
    this.#retry = setTimeout(() => void this.#connect(), delay)
    this.#retry.unref()
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listening = false
    if (this.#retry) clearTimeout(this.#retry)
    const client = this.#client
    this.#client = undefined
    if (client) await client.end().catch(() => {})
  }
}
