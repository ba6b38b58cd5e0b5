import type { Logger } from '../../core/logger.ts'
import type { Database } from '../../db/database.ts'
import { type ListenQuery, listenTo } from '../../db/listen.ts'
import { CHANGE_KINDS, type Change } from './changes.ts'
import type { ClaimedPublish } from './feed.ts'
import { CHANGES_CHANNEL, TRIGGER_FUNCTION } from './trigger-sql.ts'

/** `application_name` of the LISTEN connection, to find it in `pg_stat_activity`. */
export const CHANGES_LISTENER_NAME = 'kiln realtime listener'

/** The tables the realtime trigger is on (`kilnjs make:realtime-trigger`). */
const CAPTURED_SQL = `SELECT DISTINCT c.relname AS "table" FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
  WHERE p.proname = '${TRIGGER_FUNCTION}' AND NOT t.tgisinternal AND t.tgenabled <> 'D'`

/** The writes the trigger tells, heard and published through the feed. */
export interface OutsideWrites {
  /** Whether the trigger tells this table's writes now: kiln's own publish of it is then off. */
  captures(table: string): boolean
  listening(): boolean
  close(): Promise<void>
}

export interface OutsideWritesOptions {
  /**
   * Every instance hears every notification, in commit order; the notifications of one change
   * are one text (PostgreSQL sends one per transaction, row and kind), which is the claim: the
   * first instance to claim it numbers and sends it (`ChangeLog.append`).
   */
  publish: ClaimedPublish['publishClaimed']
  logger: Logger | undefined
}

/**
 * LISTENs for the realtime trigger's notifications (on the direct URL behind a transaction
 * pooler) and publishes each as a change, once across instances. While the connection is down
 * nothing is captured: kiln publishes its own writes again, and writes made outside kiln in
 * that time are not told.
 */
export function listenForOutsideWrites(
  database: Database,
  options: OutsideWritesOptions,
): OutsideWrites {
  const tables = new Set<string>()
  let chain = Promise.resolve()
  const heard = (payload: string | undefined) => {
    const change = parseNotification(payload)
    if (!change) return options.logger?.warn({ payload }, 'realtime: a notification was not read')
    tables.add(change.table)
    // One at a time, in the order heard: what keeps the feed's ids in commit order.
    chain = chain.then(() => options.publish([change], payload!))
  }
  const listening = listenTo(database, {
    channel: CHANGES_CHANNEL,
    name: CHANGES_LISTENER_NAME,
    notify: heard,
    state: () => {},
    async ready(query: ListenQuery) {
      for (const row of await query<{ table: string }>(CAPTURED_SQL)) tables.add(row.table)
      return true
    },
    logger: options.logger,
    messages: {
      down: 'realtime: the change listener is down: writes made outside kiln are not told until it reconnects',
      lost: 'realtime: the change listener lost its connection: writes made outside kiln are not told until it reconnects',
      back: 'realtime: the change listener reconnected',
    },
  })
  if (!listening) {
    throw new TypeError(
      'createRealtime: outsideWrites needs a PostgreSQL database it can LISTEN on: behind a transaction pooler, give createDatabase a directUrl',
    )
  }
  return {
    captures: (table) => listening.listening() && tables.has(table),
    listening: () => listening.listening(),
    async close() {
      await listening.close()
      await chain
    },
  }
}

/** The trigger's `{ resource, table, kind, id, tx }`, as a change; undefined for anything else. */
export function parseNotification(payload: string | undefined): Change | undefined {
  try {
    const { resource, table, kind, id } = JSON.parse(payload ?? '') as Record<string, unknown>
    if (typeof resource !== 'string' || typeof table !== 'string') return undefined
    if (!CHANGE_KINDS.includes(kind as never)) return undefined
    if (typeof id !== 'string' && typeof id !== 'number') return undefined
    return { resource, table, kind: kind as Change['kind'], id }
  } catch {
    return undefined
  }
}
