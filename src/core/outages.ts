import type { Logger } from './logger.ts'

/**
 * A dependency's outage told to people: one line when it goes down, one when it is back with
 * the count of requests that failed in between, each failure at debug. A stack trace per failed
 * request buried the two lines that matter under thousands during an outage.
 */

/**
 * What the drivers say when their dependency does not answer (pg, pg-pool, ioredis). Errors
 * of the data (a constraint, a syntax error) are no outage and stay logged as they are.
 */
const OUTAGE_MESSAGES: Array<[dependency: string, message: RegExp]> = [
  [
    'database',
    /^(Query read timeout|timeout exceeded when trying to connect|Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/,
  ],
  [
    'redis',
    /^(Command timed out|Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false|Reached the max retries per request limit)/,
  ],
]

/** Connection failures of the system (a refused or reset connection). */
const SYSTEM_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'])

interface Failure {
  message?: unknown
  code?: unknown
  address?: unknown
  port?: unknown
  cause?: unknown
  /** The event bus's `ListenersFailedError`: what each listener threw. */
  failures?: unknown
}

/**
 * The dependency an error says is not answering (`database`, `redis`, or the `host:port` a
 * connection was refused by), or undefined when the error is something else. Reads the causes
 * an error wraps (Drizzle's "Failed query", a KilnError's `cause`).
 */
export function outageOf(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current; depth++) {
    const failure = current as Failure
    if (Array.isArray(failure.failures)) return outageOfAll(failure.failures)
    const message = typeof failure.message === 'string' ? failure.message : ''
    for (const [dependency, pattern] of OUTAGE_MESSAGES) {
      if (pattern.test(message)) return dependency
    }
    const code = typeof failure.code === 'string' ? failure.code : ''
    // PostgreSQL's connection exceptions (08xxx) and shutdowns (57P01–57P03).
    if (/^(08\w{3}|57P0[123])$/.test(code)) return 'database'
    if (SYSTEM_CODES.has(code)) {
      return typeof failure.address === 'string' ? `${failure.address}:${failure.port}` : 'network'
    }
    current = failure.cause
  }
  return undefined
}

/** The one dependency every listener's failure names, if they all name the same. */
function outageOfAll(failures: Array<{ error?: unknown }>): string | undefined {
  const named = new Set(failures.map((failure) => outageOf(failure.error)))
  const [only] = named
  return named.size === 1 ? only : undefined
}

/**
 * Logs a failure outside a request (a job, an event listener): counted in the logger's outage
 * when a dependency did not answer, else logged at `level` as it is.
 */
export function logFailure(
  logger: Logger | undefined,
  level: 'warn' | 'error',
  error: unknown,
  fields: Record<string, unknown>,
  message: string,
): void {
  if (!logger) return
  const dependency = outageOf(error)
  if (dependency !== undefined) outageLogOf(logger).failed(dependency, error, fields)
  else logger[level](fields, message)
}

/**
 * The context variable that marks an answer given because a dependency is down: the request
 * log writes it at debug, as the outage's own lines tell what happened.
 */
export const OUTAGE_ANSWER = 'kiln.outageAnswer'

/** Options of `OutageLog`. */
export interface OutageLogOptions {
  /** While a dependency with a check is down, its check runs this often (default 1000 ms). */
  probeMs?: number
  /** A dependency without a check is back once this long passed without a failure (default 5 s). */
  quietMs?: number
}

interface Outage {
  since: number
  failures: number
  lastFailure: number
  timer: NodeJS.Timeout | undefined
  probing: boolean
}

/**
 * The outages of one app's dependencies, told on its logger. `failed` counts a request that
 * failed because a dependency did not answer; `recovered` ends the outage. A dependency with a
 * check (`watch`, which `healthRoutes` calls with its own) is probed while down, so the line
 * saying it is back comes within a second of its return, with no request needed.
 */
export class OutageLog {
  readonly #logger: Logger
  readonly #probeMs: number
  readonly #quietMs: number
  readonly #checks = new Map<string, () => Promise<unknown>>()
  readonly #down = new Map<string, Outage>()

  constructor(logger: Logger, options: OutageLogOptions = {}) {
    this.#logger = logger
    this.#probeMs = options.probeMs ?? 1_000
    this.#quietMs = options.quietMs ?? 5_000
  }

  /** Checks to probe a dependency with while it is down (`database: () => database.ping()`). */
  watch(checks: Record<string, () => Promise<unknown>>): void {
    for (const [name, check] of Object.entries(checks)) this.#checks.set(name, check)
  }

  /** A request failed because `dependency` did not answer. */
  failed(dependency: string, error: unknown, context: Record<string, unknown> = {}): void {
    const now = Date.now()
    const outage = this.#down.get(dependency)
    this.#logger.debug(
      { dependency, err: error, ...context },
      `request failed: ${dependency} is down`,
    )
    if (outage) {
      outage.failures++
      outage.lastFailure = now
      return
    }
    const started: Outage = {
      since: now,
      failures: 1,
      lastFailure: now,
      timer: undefined,
      probing: false,
    }
    this.#down.set(dependency, started)
    this.#logger.error(
      { dependency, reason: reasonOf(error) },
      `${dependency} is down (${reasonOf(error)}): requests that need it answer 503 until it is back`,
    )
    started.timer = setInterval(() => this.#probe(dependency, started), this.#probeMs)
    started.timer.unref()
  }

  /** `dependency` answered again: the outage, if any, is over. */
  recovered(dependency: string): void {
    const outage = this.#down.get(dependency)
    if (!outage) return
    clearInterval(outage.timer)
    this.#down.delete(dependency)
    const seconds = ((Date.now() - outage.since) / 1000).toFixed(1)
    this.#logger.warn(
      { dependency, downMs: Date.now() - outage.since, failedRequests: outage.failures },
      `${dependency} is back after ${seconds} s; ${outage.failures} request${outage.failures === 1 ? '' : 's'} failed meanwhile`,
    )
  }

  /** Whether `dependency` is down now, as far as the requests tell. */
  isDown(dependency: string): boolean {
    return this.#down.has(dependency)
  }

  #probe(dependency: string, outage: Outage): void {
    const check = this.#checks.get(dependency)
    if (!check) {
      if (Date.now() - outage.lastFailure >= this.#quietMs) this.recovered(dependency)
      return
    }
    if (outage.probing) return
    outage.probing = true
    let timer: NodeJS.Timeout | undefined
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer')), this.#probeMs)
    })
    Promise.race([Promise.resolve().then(check), late])
      .then(
        () => this.recovered(dependency),
        () => {},
      )
      .finally(() => {
        clearTimeout(timer)
        outage.probing = false
      })
  }
}

/** The error's message, with those of the errors it wraps: the reason, never a stack. */
function reasonOf(error: unknown): string {
  const messages: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current; depth++) {
    // The event bus's ListenersFailedError: the reason is what its first listener threw.
    const failures = (current as { failures?: Array<{ error?: unknown }> }).failures
    if (Array.isArray(failures) && failures[0]) {
      current = failures[0].error
      continue
    }
    const message = (current as { message?: unknown }).message
    const code = (current as { code?: unknown }).code
    if (typeof message === 'string' && message !== '' && !message.startsWith('Failed query')) {
      messages.push(
        typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message,
      )
    }
    current = (current as { cause?: unknown }).cause
  }
  return messages.at(-1) ?? 'no answer'
}

const logs = new WeakMap<Logger, OutageLog>()

/** The one `OutageLog` of a logger: every handler of an app that shares it counts together. */
export function outageLogOf(logger: Logger): OutageLog {
  let log = logs.get(logger)
  if (!log) {
    log = new OutageLog(logger)
    logs.set(logger, log)
  }
  return log
}
