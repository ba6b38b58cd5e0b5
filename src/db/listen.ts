import type { Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import type pg from 'pg'
import type { Logger } from '../core/logger.ts'
import { requireOptional } from '../core/optional-package.ts'
import { type Database, sessionConnectionConfig } from './database.ts'

/** A query on the listening connection (its rows). */
export type ListenQuery = <T>(text: string) => Promise<T[]>

/** What `listenTo` is told to do, and what it says in the log. */
export interface ListenOptions {
  /** The channel to LISTEN on (an identifier, not quoted). */
  channel: string
  /** `application_name` of the connection, to find it in `pg_stat_activity`. */
  name: string
  /** Each notification's payload, in the order the server sends them. */
  notify(payload: string | undefined): void
  /**
   * Run once LISTEN is in place (after each reconnect): whether notifications can be trusted
   * (the triggers are there). False: not listening; asked again 30 s later.
   */
  ready?: ((query: ListenQuery) => Promise<boolean>) | undefined
  /** Told when the connection starts (true) and stops (false) hearing every notification. */
  state(listening: boolean): void
  logger?: Logger | undefined
  /** What the log says when the connection is down, lost, and back. */
  messages: { down: string; lost: string; back: string }
}

/** A LISTEN connection; `listening()` is cheap. */
export interface Listening {
  listening(): boolean
  close(): Promise<void>
}

const READY_RECHECK_MS = 30_000

/**
 * LISTEN on a database: PGlite's in-process LISTEN, or a pg connection of its own (a pooled one
 * would be handed to queries). Behind a transaction pooler a LISTEN would stay on whichever
 * server connection ran it, heard by whoever holds that connection next: it runs on the direct
 * URL (`directUrl` of `createDatabase`). Undefined on SQLite and behind a pooler without one.
 */
export function listenTo(database: Database, options: ListenOptions): Listening | undefined {
  if (database.dialect === 'sqlite') return undefined
  if (database.driver === 'pglite' && database.pglite) {
    return new PgliteListening(database.pglite, options)
  }
  const config = sessionConnectionConfig(database)
  return config && new PgListening(config, options)
}

class PgliteListening implements Listening {
  readonly #pglite: PGlite
  readonly #options: ListenOptions
  #listening = false
  #unlisten: (() => Promise<void>) | undefined
  #closed = false
  #recheck: NodeJS.Timeout | undefined

  constructor(pglite: PGlite, options: ListenOptions) {
    this.#pglite = pglite
    this.#options = options
    pglite
      .listen(options.channel, (payload) => options.notify(payload))
      .then(async (unlisten) => {
        if (this.#closed) return unlisten()
        this.#unlisten = unlisten
        await this.#checkReady()
      })
      .catch((error: unknown) => options.logger?.warn({ err: error }, options.messages.down))
  }

  async #checkReady(): Promise<void> {
    if (this.#closed || this.#pglite.closed) return
    const query: ListenQuery = async (text) => (await this.#pglite.query(text)).rows as never
    if (!this.#options.ready || (await this.#options.ready(query))) {
      this.#listening = true
      this.#options.state(true)
      return
    }
    this.#recheck = setTimeout(() => void this.#checkReady().catch(() => {}), READY_RECHECK_MS)
    this.#recheck.unref()
  }

  listening(): boolean {
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
 * LISTEN on its own connection. The socket is unreferenced, so an app that forgets to close
 * still exits; on any error `state(false)` is told and the connection is made again.
 */
class PgListening implements Listening {
  readonly #config: pg.ClientConfig
  readonly #options: ListenOptions
  #client: pg.Client | undefined
  #listening = false
  #closed = false
  #failures = 0
  #retry: NodeJS.Timeout | undefined

  constructor(config: pg.ClientConfig, options: ListenOptions) {
    this.#config = config
    this.#options = options
    void this.#connect()
  }

  listening(): boolean {
    return this.#listening
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    const { channel, logger, messages } = this.#options
    // Only reached on a database opened by pg, so the package is there.
    const { Client } = requireOptional<typeof import('pg')>('pg', 'PostgreSQL')
    const client = new Client({
      ...this.#config,
      connectionTimeoutMillis: 5_000,
      application_name: this.#options.name,
    })
    this.#client = client
    client.on('error', () => this.#lost(client))
    client.on('end', () => this.#lost(client))
    client.on('notification', (message) => {
      if (message.channel === channel) this.#options.notify(message.payload)
    })
    try {
      await client.connect()
      const socket = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream
      socket?.unref?.()
      await client.query(`LISTEN ${channel}`)
      const query: ListenQuery = async (text) => (await client.query(text)).rows
      const ready = !this.#options.ready || (await this.#options.ready(query))
      if (this.#closed || this.#client !== client) {
        await client.end().catch(() => {})
        return
      }
      if (!ready) {
        this.#client = undefined
        await client.end().catch(() => {})
        this.#retry = setTimeout(() => void this.#connect(), READY_RECHECK_MS)
        this.#retry.unref()
        return
      }
      if (this.#failures > 0) logger?.info(messages.back)
      this.#failures = 0
      this.#listening = true
      this.#options.state(true)
    } catch (error) {
      if (this.#failures === 0 && !this.#closed) logger?.warn({ err: error }, messages.down)
      this.#lost(client)
    }
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return
    this.#client = undefined
    const wasListening = this.#listening
    this.#listening = false
    this.#options.state(false)
    client.end().catch(() => {})
    if (this.#closed) return
    if (wasListening) this.#options.logger?.warn(this.#options.messages.lost)
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
