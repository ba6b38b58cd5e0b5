import type { NodePgDatabase, NodePgSession } from 'drizzle-orm/node-postgres'
import type pg from 'pg'
import { RequestAbortedError, ServiceUnavailableError } from '../core/errors.ts'
import { sendCancelRequest } from './query-cancel.ts'

export { DEFAULT_SLOW_QUERY_WAIT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from '../core/budgets.ts'

/**
 * A list or search query ran past the statement timeout (`statementTimeoutMs`): the server
 * cancelled it. Answers 503 `{ error }`; the log line carries `shape` (the table, the columns,
 * each filter's field and operator, the sort and the paging mode: never a value).
 */
export class QueryTimeoutError extends ServiceUnavailableError {
  override readonly code = 'query_timeout'
  /** What was asked, without its values (`statement.ts`'s `shapeOf`). */
  readonly shape: string

  constructor(timeoutMs: number, shape: string, message?: string) {
    super(
      message ??
        `Service Unavailable: the query took longer than its ${timeoutMs} ms budget; narrow the filters or the page, or try again later`,
    )
    this.shape = shape
  }
}

/**
 * A query that may be slow waited `slowQueryWaitMs` for its turn (every one of the
 * `slowQueryConcurrency` slots busy) and never ran. Answers 503 `{ error }` as a query past its
 * statement timeout does, with the same code and the shape in the log.
 */
export class QueryWaitTimeoutError extends QueryTimeoutError {
  constructor(waitMs: number, concurrency: number, shape: string) {
    super(
      waitMs,
      shape,
      `Service Unavailable: ${concurrency} slow ${concurrency === 1 ? 'query was' : 'queries were'} running and this one waited ${waitMs} ms for its turn; narrow the filters or the page, or try again later`,
    )
  }
}

/**
 * A query that may be slow got its turn but found every pooled connection busy (held by
 * transactions or other queries of the app) for the pool's connection wait (5 s). Answers 503
 * `{ error }`, as a wait for a turn does, with the same code and the shape in the log: the
 * database is up but has no room, which is not the failure a 500 reports.
 */
export class ConnectionWaitTimeoutError extends QueryTimeoutError {
  constructor(waitMs: number, shape: string) {
    super(
      waitMs,
      shape,
      `Service Unavailable: every pooled database connection was busy and this query waited ${waitMs} ms for one; try again later`,
    )
  }
}

/**
 * The client went away while its query ran: the query was cancelled on the server. Nobody is
 * left to read an answer: logged at debug, as any request the client closed.
 */
export class QueryCancelledError extends RequestAbortedError {
  constructor() {
    super({ message: 'Bad Request: the client closed the request; its query was cancelled' })
  }
}

/** Options of `budgetedDb`. */
export interface QueryBudgetOptions {
  /** The request's signal: aborting it cancels the running query (the client hung up). */
  signal?: AbortSignal | undefined
  /** What is asked, without its values: named in the log when the budget runs out. */
  shape: string
}

/**
 * How many queries that may be slow run at once by default: what the pool holds beside the
 * pipelined connections (`poolMax - pipelineConnections`, at least 1), so that the slow queries
 * and the pipes together keep PostgreSQL as busy as the pool alone would without pipelining.
 */
export function defaultSlowQueryConcurrency(poolMax: number, pipelineConnections: number): number {
  return Math.max(1, Math.floor(poolMax - pipelineConnections))
}

/**
 * At most `concurrency` holders at once; the others wait their turn in order, each at most
 * `waitMs` (then `QueryWaitTimeoutError`, 503) or until its signal aborts (then
 * `QueryCancelledError`): either way it leaves the queue and never runs.
 */
export class QueryGate {
  readonly concurrency: number
  readonly waitMs: number
  #running = 0
  /** Waiting turns, oldest first (a Set keeps the order and lets one leave from anywhere). */
  readonly #queue = new Set<() => void>()

  constructor(concurrency: number, waitMs: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TypeError(
        `slowQueryConcurrency must be a whole number, 1 or more (got ${concurrency})`,
      )
    }
    if (!Number.isInteger(waitMs) || waitMs < 0) {
      throw new TypeError(
        `slowQueryWaitMs must be a whole number of milliseconds, 0 or more (got ${waitMs})`,
      )
    }
    this.concurrency = concurrency
    this.waitMs = waitMs
  }

  /** Holders now. */
  get running(): number {
    return this.#running
  }

  /** Turns waited for now. */
  get waiting(): number {
    return this.#queue.size
  }

  /**
   * Resolves with the function that gives the turn back (once: a second call does nothing)
   * when this caller's turn comes.
   */
  enter({ signal, shape }: QueryBudgetOptions): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new QueryCancelledError())
    if (this.#running < this.concurrency && this.#queue.size === 0) {
      this.#running++
      return Promise.resolve(this.#releaser())
    }
    if (this.waitMs === 0) {
      return Promise.reject(new QueryWaitTimeoutError(0, this.concurrency, shape))
    }
    return new Promise((resolve, reject) => {
      const leave = (error: Error) => {
        this.#queue.delete(turn)
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        reject(error)
      }
      const onAbort = () => leave(new QueryCancelledError())
      const turn = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        resolve(this.#releaser())
      }
      const timer = setTimeout(
        () => leave(new QueryWaitTimeoutError(this.waitMs, this.concurrency, shape)),
        this.waitMs,
      )
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#queue.add(turn)
    })
  }

  #releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      this.#running--
      for (const turn of this.#queue) {
        if (this.#running >= this.concurrency) break
        this.#queue.delete(turn)
        this.#running++
        turn()
      }
    }
  }
}

/** A pg pool's budget, set by `createDatabase`, with the Drizzle classes to build a db with. */
interface PoolBudget {
  statementTimeoutMs: number
  /**
   * Whether a budgeted query's statements may leave together (pg's pipeline mode): not through
   * a transaction pooler, where kiln sends no pipelines.
   */
  pipelines: boolean
  /** The turns of the queries that may be slow (`slowQueryConcurrency`, `slowQueryWaitMs`). */
  gate: QueryGate
  Session: typeof NodePgSession
  Database: typeof NodePgDatabase
}

const budgets = new WeakMap<object, PoolBudget>()

/** Called by `createDatabase` for each pg pool it opens. */
export function setPoolBudget(pool: pg.Pool, budget: PoolBudget): void {
  const ms = budget.statementTimeoutMs
  if (!Number.isInteger(ms) || ms < 0) {
    throw new TypeError(
      `statementTimeoutMs must be a whole number of milliseconds, 0 or more (got ${ms})`,
    )
  }
  budgets.set(pool, budget)
}

/**
 * The gate the queries that may be slow pass on the database under a Drizzle db (how many run,
 * how many wait); undefined where none applies (PGlite, SQLite, a pool kiln did not open).
 */
export function slowQueryGateOf(db: object): QueryGate | undefined {
  const client = (db as { $client?: object }).$client
  return client === undefined ? undefined : budgets.get(client)?.gate
}

/** The statement timeout of the database under a Drizzle db; undefined where none applies. */
export function statementTimeoutOf(db: object): number | undefined {
  const client = (db as { $client?: object }).$client
  return client === undefined ? undefined : budgets.get(client)?.statementTimeoutMs
}

type SessionArgs = ConstructorParameters<typeof NodePgSession>

interface DrizzlePgDb {
  dialect: SessionArgs[1]
  session: { schema: SessionArgs[2]; options: SessionArgs[3] }
}

/**
 * A Drizzle db over the same database whose every query runs under the budget: the one place
 * that decides how a query that may be slow runs.
 *
 * On PostgreSQL (a pool `createDatabase` opened) each query first waits for its turn: at most
 * `slowQueryConcurrency` budgeted queries run at once, the others wait in order, at most
 * `slowQueryWaitMs` (then `QueryWaitTimeoutError`, 503) and no longer than their client stays
 * (`QueryCancelledError`). Then it runs on a pooled connection of its
 * own, never a pipelined one (where it would hold up the fast queries written behind it), in a
 * transaction of its own with `statement_timeout` set for that transaction only (`SET LOCAL`,
 * which a transaction pooler keeps: PgBouncer refuses it as a startup option). Past the
 * timeout the server cancels it and the query throws `QueryTimeoutError` (503). When `signal`
 * aborts (the client hung up) the query is cancelled on the server (`pg_cancel_backend`) and
 * throws `QueryCancelledError`.
 *
 * On PGlite and SQLite, and over a pool kiln did not open, the db is returned as it is:
 * neither can stop a statement once it runs (PGlite and better-sqlite3 run it on the event
 * loop's thread to its end); a request whose client is already gone runs no query there.
 */
export function budgetedDb<Db extends object>(db: Db, options: QueryBudgetOptions): Db {
  const pool = (db as unknown as { $client?: pg.Pool }).$client
  const budget = pool === undefined ? undefined : budgets.get(pool)
  if (!pool || !budget) {
    if (options.signal?.aborted) throw new QueryCancelledError()
    return db
  }
  const given = db as unknown as DrizzlePgDb
  const client = {
    query: (config: unknown, values?: unknown) =>
      budgetedQuery(pool, budget, options, config, values),
  }
  const session = new budget.Session(
    client as unknown as SessionArgs[0],
    given.dialect,
    given.session.schema,
    given.session.options,
  )
  const budgeted = new budget.Database(
    given.dialect,
    session,
    given.session.schema as never,
  ) as unknown as Db
  ;(budgeted as unknown as { $client: unknown }).$client = client
  return budgeted
}

/** 57014: `canceling statement due to statement timeout` or `… due to user request`. */
const QUERY_CANCELED = '57014'

/** A budgeted query: its turn at the gate first, then a pooled connection of its own. */
async function budgetedQuery(
  pool: pg.Pool,
  budget: PoolBudget,
  options: QueryBudgetOptions,
  config: unknown,
  values: unknown,
): Promise<pg.QueryResult> {
  const release = await budget.gate.enter(options)
  try {
    return await budgetedQueryOnPool(pool, budget, options, config, values)
  } finally {
    release()
  }
}

async function budgetedQueryOnPool(
  pool: pg.Pool,
  { statementTimeoutMs: timeoutMs, pipelines: mayPipeline }: PoolBudget,
  { signal, shape }: QueryBudgetOptions,
  config: unknown,
  values: unknown,
): Promise<pg.QueryResult> {
  if (signal?.aborted) throw new QueryCancelledError()
  const client = await pooledConnection(pool, shape)
  let cancelled: Promise<unknown> | undefined
  let pid: number | undefined
  const onAbort = () => {
    // A CancelRequest on a connection of its own (the protocol's way, as psql's Ctrl-C): never
    // a pooled connection, which every one of them might be waiting for. The backend is ours
    // until the transaction ends; the connection goes back only once the cancel was sent.
    if (pid !== undefined) cancelled ??= sendCancelRequest(pool, client)
  }
  signal?.addEventListener('abort', onAbort, { once: true })
  // The three statements leave together, in one round trip: the connection is in pg's pipeline
  // mode for this use (a query written while another runs is deprecated outside it, and pg 9
  // rejects it). Without it (an older pg, a transaction pooler) each waits for the one before. A COMMIT
  // after a failed (or cancelled) query ends the transaction as a ROLLBACK does, without error.
  let broken: Error | undefined
  let answered: PromiseSettledResult<pg.QueryResult> | undefined
  const mode = client as unknown as { pipeline?: boolean }
  const pipelines = mayPipeline && mode.pipeline === false
  if (pipelines) mode.pipeline = true
  try {
    const begin = `begin; select set_config('statement_timeout', '${timeoutMs}', true), pg_backend_pid() as pid`
    const begun = client.query(begin)
    const ask = () =>
      client.query(config as pg.QueryConfig, values as unknown[]).then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      )
    const asked = pipelines ? ask() : undefined
    const committed = pipelines ? client.query('commit') : undefined
    committed?.catch(() => {})
    const results = await begun
    pid = (results as unknown as [unknown, pg.QueryResult<{ pid: number }>])[1].rows[0]?.pid
    if (signal?.aborted) onAbort()
    answered = await (asked ?? ask())
    await (committed ?? client.query('commit'))
  } catch (error) {
    broken = error as Error
  } finally {
    if (pipelines) mode.pipeline = false
  }
  signal?.removeEventListener('abort', onAbort)
  if (cancelled) {
    await cancelled.catch(() => {})
    // Had the cancel met the COMMIT, the transaction would be left open: end it for sure.
    if (!broken) await client.query('rollback').catch((error: Error) => (broken = error))
  }
  client.release(broken)
  if (answered?.status === 'fulfilled' && !broken) return answered.value
  const error = answered?.status === 'rejected' ? answered.reason : broken
  if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error
  if (cancelled) throw new QueryCancelledError()
  throw new QueryTimeoutError(timeoutMs, shape)
}

/**
 * A pooled connection for a budgeted query. pg-pool's wait for one is bounded by its
 * `connectionTimeoutMillis`; when that runs out with every connection open and busy, the answer
 * is the budget's 503. A failure to open a connection (the server down) stays what it is: a 500.
 */
async function pooledConnection(pool: pg.Pool, shape: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect()
  } catch (error) {
    const { max, connectionTimeoutMillis } = pool.options
    const full = pool.totalCount >= (max ?? 10) && pool.idleCount === 0
    if (!full || (error as { code?: unknown }).code !== undefined) throw error
    throw new ConnectionWaitTimeoutError(connectionTimeoutMillis ?? 0, shape)
  }
}

/**
 * The budget's error (timeout or cancel) under Drizzle's wrapper (`Failed query: …`, which
 * holds the values): rethrown bare, so neither the answer nor the log shows a value.
 */
export function budgetError(error: unknown): QueryTimeoutError | QueryCancelledError | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof QueryTimeoutError || current instanceof QueryCancelledError)
      return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}
