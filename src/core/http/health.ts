import { type Context, Hono } from 'hono'
import type { Logger } from '../logger.ts'
import { OUTAGE_ANSWER, outageLogOf } from '../outages.ts'
import { setContextValue } from './context-value.ts'

/** Most a dependency's check may take before it counts as down, by default (800 ms). */
export const DEFAULT_HEALTH_CHECK_MS = 800

/** Options of `healthRoutes`. */
export interface HealthOptions {
  /** Each dependency's check by name (`database`, `redis`): resolves once it answered. */
  checks: Record<string, () => Promise<unknown>>
  /**
   * Most a check may take before its dependency counts as down. Default 800 ms, so that every
   * answer leaves within a second whatever the dependencies do.
   */
  timeoutMs?: number
  /**
   * Told (at debug) why a check failed. Its `OutageLog` (the one `errorHandler` feeds) probes
   * a dependency with these checks while requests find it down, and says when it is back.
   */
  logger?: Logger
  /** What readiness reports beside the dependencies, read at each answer (open streams…). */
  details?: () => Record<string, unknown>
}

type State = 'up' | 'down'

/**
 * The health endpoints load balancers and Kubernetes expect:
 * - `GET /health/live`: liveness, 200 while the process serves requests; it checks no dependency
 *   (a database outage must not get every instance restarted).
 * - `GET /health/ready` (and `GET /health`): readiness, 200 `{ status: 'ok', dependencies }`
 *   when every check answered within `timeoutMs`, else 503 `{ error, dependencies }` naming
 *   what is down, with `Retry-After`.
 *
 * A check still running from an earlier request is not started again: its dependency counts as
 * down until it answers, so a frozen dependency never piles up waiting checks.
 * @example
 * ```ts
 * app.route('/', healthRoutes({ checks: { database: () => database.ping() }, logger }))
 * ```
 */
export function healthRoutes(options: HealthOptions): Hono {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HEALTH_CHECK_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new TypeError(
      `healthRoutes: timeoutMs must be a whole number of ms, 1 or more (got ${timeoutMs})`,
    )
  }
  const pending = new Map<string, Promise<unknown>>()
  const outages = options.logger ? outageLogOf(options.logger) : undefined
  outages?.watch(options.checks)

  const checkOne = (name: string, check: () => Promise<unknown>): Promise<State> => {
    let running = pending.get(name)
    if (running === undefined) {
      running = Promise.resolve()
        .then(check)
        .finally(() => pending.delete(name))
      pending.set(name, running)
    }
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<State>((resolve) => {
      timer = setTimeout(() => resolve('down'), timeoutMs)
    })
    const answered = running.then(
      (): State => {
        outages?.recovered(name)
        return 'up'
      },
      (error: unknown): State => {
        options.logger?.debug({ dependency: name, err: error }, 'health: check failed')
        return 'down'
      },
    )
    return Promise.race([answered, late]).finally(() => clearTimeout(timer))
  }

  const ready = async () => {
    const names = Object.keys(options.checks)
    const states = await Promise.all(
      names.map((name) => checkOne(name, options.checks[name] as () => Promise<unknown>)),
    )
    const dependencies = Object.fromEntries(names.map((name, i) => [name, states[i] as State]))
    const down = names.filter((name) => dependencies[name] === 'down')
    return { dependencies, down }
  }

  const app = new Hono()
  const noStore = { 'Cache-Control': 'no-store' }
  app.get('/health/live', (c) => c.json({ status: 'ok' }, 200, noStore))
  const readiness = async (c: Context) => {
    const { dependencies, down } = await ready()
    const details = options.details?.() ?? {}
    if (down.length === 0) return c.json({ status: 'ok', dependencies, ...details }, 200, noStore)
    // Requests already found it down: the outage log tells it, not a line per probe.
    if (down.every((name) => outages?.isDown(name))) setContextValue(c, OUTAGE_ANSWER, true)
    return c.json(
      {
        error: `Service Unavailable: ${down.join(' and ')} ${down.length === 1 ? 'is' : 'are'} down`,
        code: 'dependency_unavailable',
        dependencies,
        ...details,
      },
      503,
      { ...noStore, 'Retry-After': '5' },
    )
  }
  app.get('/health/ready', readiness)
  app.get('/health', readiness)
  return app
}
