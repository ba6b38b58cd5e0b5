import { performance } from 'node:perf_hooks'
import type pg from 'pg'
import { type Corkable, corkUntilTheLoopTurns } from '../core/cork.ts'

/** A pipelined connection: its client and when each of its unanswered queries was sent. */
interface Pipe {
  client: pg.Client
  /** Settles when the connection is up, or failed to come up. */
  ready: Promise<void>
  /** Its socket, once connected: corked per loop turn. */
  socket: Corkable | undefined
  /** Send times (`performance.now()`) of the unanswered queries, oldest first: answers come in order. */
  sentAt: number[]
  /** Takes it out of use and closes it: the next query opens another in its place. */
  drop(): void
}

export interface PipelineOptions {
  /** Pipelined connections; 0 leaves the pool alone. */
  connections: number
  /**
   * A connection whose oldest unanswered query was sent longer ago than this is stalled (a
   * lock wait, a slow scan): no query is added behind it. Default 25 ms.
   */
  stalledAfterMs?: number
}

const pipesOf = new WeakMap<pg.Pool, Array<Pipe | undefined>>()

/** The sockets of the pool's pipelined connections that are up (for tests). */
export function pipelinedSockets(pool: pg.Pool): object[] {
  return (pipesOf.get(pool) ?? []).flatMap((pipe) => (pipe?.socket ? [pipe.socket] : []))
}

/**
 * Sends the pool's one-off queries (`pool.query`: what Drizzle sends outside a transaction)
 * over a few pipelined connections of their own, as postgres.js and tokio-postgres do. A
 * query is written at once, without waiting for the connection's previous answers, on the
 * connection with the fewest unanswered queries; the queries of one loop turn leave in one
 * socket write per connection. Each query keeps its own `Sync`: one that fails fails alone.
 * On a loaded server this spends far less CPU than a connection per query (one write and one
 * read for many queries, no checkout): measured in docs/performance-archive.md, "PostgreSQL pipelining".
 *
 * The cost of pipelining is head-of-line blocking: a query waits for the ones written before
 * it on its connection. So no query is added behind a stalled one (unanswered for
 * `stalledAfterMs`: a lock wait, a slow scan); when every connection is stalled, queries go
 * to the pool, a connection each, as they would without pipelining. What waits behind a slow
 * query is what was sent to its connection before it looked stalled.
 *
 * The pool keeps everything that needs a connection to itself: transactions and
 * `pool.connect()` (sessions, LISTEN), callback-style calls, cursors and streams (`submit`),
 * and `rows` (portals, which pipelining cannot share). A connection that fails is dropped (its
 * unanswered queries reject with the error) and opened again by the next query. With a `pg`
 * too old to pipeline, the pool is left alone.
 */
export function pipelineOneOffQueries(
  pool: pg.Pool,
  Client: typeof pg.Client,
  { connections, stalledAfterMs = 25 }: PipelineOptions,
): void {
  checkPipelineOptions(connections, stalledAfterMs)
  if (connections === 0) return
  const probe = new Client({ ...pool.options, pipeline: true } as pg.ClientConfig)
  if ((probe as { pipeline?: boolean }).pipeline !== true) return
  const pipes: Array<Pipe | undefined> = new Array(connections).fill(undefined)
  pipesOf.set(pool, pipes)
  const pooledQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown
  const endPool = pool.end.bind(pool)
  let ending = false

  const open = (slot: number) => openPipe(pool, Client, pipes, slot)

  /** The flowing connection with the fewest unanswered queries; none when all are stalled. */
  const leastBusy = (now: number): Pipe | undefined => {
    let best: Pipe | undefined
    for (let slot = 0; slot < connections; slot++) {
      const pipe = pipes[slot] ?? open(slot)
      const oldest = pipe.sentAt[0]
      if (oldest !== undefined && now - oldest > stalledAfterMs) continue
      if (!best || pipe.sentAt.length < best.sentAt.length) best = pipe
    }
    return best
  }

  const query = (config: unknown, values?: unknown, callback?: unknown) => {
    const own =
      ending ||
      typeof values === 'function' ||
      callback !== undefined ||
      (typeof config === 'object' &&
        config !== null &&
        ('submit' in config || (config as { rows?: unknown }).rows !== undefined))
    const now = performance.now()
    const pipe = own ? undefined : leastBusy(now)
    if (!pipe) return pooledQuery(config, values, callback)
    pipe.sentAt.push(now)
    const answered = () => {
      pipe.sentAt.shift()
    }
    const send = () => {
      corkUntilTheLoopTurns(pipe.socket)
      return pipe.client.query(config as pg.QueryConfig, values as unknown[])
    }
    const answer = pipe.socket ? send() : pipe.ready.then(send)
    answer.then(answered, (error: { severity?: unknown }) => {
      answered()
      // The server ends the session after a FATAL error (a terminated backend, a shutdown):
      // nothing more is sent on it, even before its socket reports the end.
      if (error?.severity === 'FATAL' || error?.severity === 'PANIC') pipe.drop()
    })
    return answer
  }
  pool.query = query as typeof pool.query

  pool.end = (async () => {
    ending = true
    const open = pipes.filter((pipe): pipe is Pipe => pipe !== undefined)
    pipes.fill(undefined)
    await Promise.all(open.map((pipe) => pipe.client.end().catch(() => {})))
    return endPool()
  }) as typeof pool.end
}

function checkPipelineOptions(connections: number, stalledAfterMs: number): void {
  if (!Number.isInteger(connections) || connections < 0) {
    throw new TypeError(
      `pipelineConnections must be a whole number, 0 or more (got ${connections})`,
    )
  }
  if (!Number.isFinite(stalledAfterMs) || stalledAfterMs < 0) {
    throw new TypeError(
      `pipelineStalledAfterMs must be 0 or more milliseconds (got ${stalledAfterMs})`,
    )
  }
}

/** Opens the pipelined connection of `slot`; it leaves the slot when it fails or ends. */
function openPipe(
  pool: pg.Pool,
  Client: typeof pg.Client,
  pipes: Array<Pipe | undefined>,
  slot: number,
): Pipe {
  const client = new Client({ ...pool.options, pipeline: true } as pg.ClientConfig)
  const drop = () => {
    if (pipes[slot] !== pipe) return
    pipes[slot] = undefined
    client.end().catch(() => {})
  }
  // Queries wait for the connection, so a failed connect rejects them with its own error.
  const ready = client.connect().then(() => {
    pipe.socket = (
      client as unknown as { connection: { stream: Pipe['socket'] } }
    ).connection.stream
  })
  ready.catch(drop)
  const pipe: Pipe = { client, ready, socket: undefined, sentAt: [], drop }
  client.on('error', drop)
  client.on('end', drop)
  pipes[slot] = pipe
  return pipe
}
