import { DependencyError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { mapEntry } from '../map-entry.ts'
import type { Redis } from '../redis.ts'
import { addressKey, checkTrustProxy, type TrustProxy } from './client-ip.ts'
import { MemoryWindows, type WindowCount } from './memory-windows.ts'
import { RedisWindows } from './redis-windows.ts'

/** The API key that authenticated a request, as a limiter sees it (kiln/api's `ApiKeyInfo`). */
export interface LimitedApiKey {
  id: number
  name: string
  scopes: string[]
}

/** What a limiter may look at to choose its bucket and limit. */
export interface LimitRequest {
  /** The client's address (see `trustProxy`), or `unknown`. */
  ip: string
  /** Present when the limiter runs after `apiKeyAuth`. */
  apiKey: LimitedApiKey | undefined
  method: string
  path: string
  /**
   * Who the request is about, when the caller knows it (the email of a login attempt, a
   * session id): limiters like `perIpAndSubject` bucket on it.
   */
  subject?: string | undefined
}

/** One bucket: requests with the same `key` share `points` per `durationSeconds`. */
export interface LimitRule {
  key: string
  points: number
  /** Window length; 60 when omitted. */
  durationSeconds?: number
}

/**
 * A number of requests per window: `points` requests each `durationSeconds` (60 when omitted).
 * The one vocabulary of kiln's limits: the limiters, the OAuth server's throttles and the MCP
 * endpoint's limits all take it.
 */
export interface WindowLimit {
  points: number
  durationSeconds?: number
}

/**
 * The former spelling of the OAuth and MCP limits: `max` requests per `windowMs` milliseconds.
 * @deprecated Write `{ points, durationSeconds }` (a `WindowLimit`); this is still read, rounded
 * up to whole seconds.
 */
export interface LegacyWindowLimit {
  max: number
  windowMs: number
}

/**
 * A limit as an option of the OAuth server or the MCP endpoint takes it: `{ points,
 * durationSeconds }`, or the deprecated `{ max, windowMs }`.
 */
export type WindowLimitOption = WindowLimit | LegacyWindowLimit

/**
 * A limit as an option takes it, in either spelling, as `{ points, durationSeconds }`: the one
 * place the deprecated `{ max, windowMs }` is read. `name` says which option, in the TypeError a
 * limit that is not a positive whole number of requests per at least a second throws.
 */
export function windowLimit(limit: WindowLimitOption, name: string): Required<WindowLimit> {
  const { points, durationSeconds } =
    'points' in limit
      ? { points: limit.points, durationSeconds: limit.durationSeconds ?? 60 }
      : {
          points: limit.max,
          durationSeconds: limit.windowMs >= 1000 ? Math.ceil(limit.windowMs / 1000) : 0,
        }
  const whole = (n: number) => Number.isSafeInteger(n) && n >= 1
  if (!whole(points) || !whole(durationSeconds)) {
    throw new TypeError(
      `${name} needs points >= 1 and durationSeconds >= 1, whole numbers (or, deprecated, max >= 1 and windowMs >= 1000)`,
    )
  }
  return { points, durationSeconds }
}

/**
 * A named limiter: a fixed limit per client IP (`{ points, durationSeconds? }`), or a function
 * choosing bucket and limit per request, e.g. a higher limit per key when one is present:
 * `(r) => r.apiKey ? { key: \`key:${r.apiKey.id}\`, points: 600 } : perIp(r, 60)`.
 */
export type LimiterDefinition = WindowLimit | ((request: LimitRequest) => LimitRule)

/** Options of `createRateLimiters`. */
export interface RateLimitersOptions {
  /**
   * A request-path ioredis client (`SharedState.client`): one limit shared by every instance.
   * Without it, limits are counted in this process's memory.
   */
  redis?: Redis | undefined
  /** Prefix of the limiter keys in Redis. Default `kiln:rl`. */
  prefix?: string
  /** Whether `X-Forwarded-For` is believed; see `TrustProxy`. Default false. */
  trustProxy?: TrustProxy
  /** The app's limiters; `api` replaces the built-in one (60 per minute per client IP). */
  limiters?: Record<string, LimiterDefinition>
  /**
   * Told when Redis fails and limits fall back to memory, and (at info) when a bucket is
   * spent: one line per bucket and window, at its first refused request.
   */
  logger?: Logger
  /** The clock of the counts kept in memory (ms since the epoch); `Date.now` by default. */
  now?: () => number
}

/** What a limiter answers for one request: allowed or not, and the `RateLimit-*` values. */
export interface LimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  resetSeconds: number
}

/** Named fixed-window limits in memory or Redis, from `createRateLimiters`. */
export interface RateLimiters {
  readonly kind: 'memory' | 'redis'
  readonly trustProxy: TrustProxy
  has(name: string): boolean
  names(): string[]
  /**
   * Adds a limiter unless the app already defined one with that name: libraries (the OAuth
   * server, the login helper) bring their defaults, and the app's own definition wins.
   */
  define(name: string, definition: LimiterDefinition): void
  /**
   * Counts one request against the named limiter, atomically: of any number of concurrent
   * requests, exactly `points` are allowed. Count first, then decide on the answer; to limit
   * only failures (wrong codes), `refund` the request that turned out right.
   */
  consume(name: string, request: LimitRequest): Promise<LimitResult>
  /**
   * The named limiter's state for this request, without counting it. For display only:
   * deciding on it, then counting, lets concurrent requests through.
   */
  peek(name: string, request: LimitRequest): Promise<LimitResult>
  /** Takes back one request `consume` counted in the request's bucket (never below zero). */
  refund(name: string, request: LimitRequest): Promise<void>
  /** Forgets the request's bucket (e.g. the failed logins of an email once one succeeds). */
  reset(name: string, request: LimitRequest): Promise<void>
  /** The bucket the request counts in: two requests with one bucket share their count. */
  bucketOf(name: string, request: LimitRequest): string
  /** Whether the limiter may choose its bucket by the request's key (a function definition). */
  bucketsByKey(name: string): boolean
}

/** The bucket of the request's client address, with the given limit. */
export function perIp(request: LimitRequest, points: number, durationSeconds = 60): LimitRule {
  return { key: addressKey(request.ip), points, durationSeconds }
}

/**
 * The bucket of one subject from one address (failed logins of an email from an IP): a
 * stranger elsewhere cannot use up the limit of someone else's account.
 */
export function perIpAndSubject(
  request: LimitRequest,
  points: number,
  durationSeconds = 60,
): LimitRule {
  const subject = (request.subject ?? '').normalize('NFC').toLowerCase()
  return { key: `${addressKey(request.ip)}:${subject}`, points, durationSeconds }
}

/** The built-in `api` limiter of the spec: 60 requests per minute per client IP. */
export const DEFAULT_API_LIMIT: LimiterDefinition = { points: 60, durationSeconds: 60 }

const WARN_EVERY_MS = 60_000

/** The windows of one limiter and window length, in memory or in Redis. */
interface WindowCounter {
  consume(key: string): WindowCount | Promise<WindowCount>
  get(key: string): WindowCount | undefined | Promise<WindowCount | undefined>
  refund(key: string): unknown
  delete(key: string): unknown
}

/**
 * Named rate limiters on fixed windows: counted in this process's memory (`MemoryWindows`),
 * or in Redis (one atomic script per request, one count across instances: `RedisWindows`)
 * when a client is given. If Redis fails, each instance keeps enforcing the same limits in its
 * own memory and logs a warning: requests are neither refused with a 500 nor let through
 * unlimited while Redis is away.
 * @example
 * ```ts
 * const limiters = createRateLimiters({ redis: shared.client, trustProxy: config.trustProxy })
 * app.use('/api/*', throttle(limiters, 'api'))
 * ```
 */
export function createRateLimiters(options: RateLimitersOptions = {}): RateLimiters {
  const prefix = options.prefix ?? 'kiln:rl'
  const trustProxy = options.trustProxy ?? false
  checkTrustProxy(trustProxy, 'createRateLimiters')
  const definitions: Record<string, LimiterDefinition> = {
    api: DEFAULT_API_LIMIT,
    ...options.limiters,
  }
  for (const [name, definition] of Object.entries(definitions)) checkDefinition(name, definition)
  const redis = options.redis
  const logger = options.logger
  const now = options.now ?? Date.now
  const counter = windowCounters(prefix, redis, fallbackWarning(logger), now)

  const ruleFor = (name: string, request: LimitRequest) => ruleOf(definitions, name, request)

  const run = async (
    name: string,
    request: LimitRequest,
    step: (
      windows: WindowCounter,
      key: string,
    ) => WindowCount | undefined | Promise<WindowCount | undefined>,
  ): Promise<LimitResult> => {
    const rule = ruleFor(name, request)
    let counted: WindowCount | undefined | Promise<WindowCount | undefined>
    try {
      counted = step(counter(name, rule.durationSeconds ?? 60), rule.key)
      // Memory answers at once: nothing to wait for on the request path.
      if (counted instanceof Promise) counted = await counted
    } catch (error) {
      throw new DependencyError('Internal Server Error', { cause: error })
    }
    const result = limitResult(rule, counted)
    // Only the first refusal: a flood of refused requests must not flood the log.
    if (counted?.count === rule.points + 1 && step === consumeStep) {
      logReached(logger, name, request, rule, result)
    }
    return result
  }

  const forget = async (name: string, request: LimitRequest, refund: boolean) => {
    const rule = ruleFor(name, request)
    const windows = counter(name, rule.durationSeconds ?? 60)
    try {
      await (refund ? windows.refund(rule.key) : windows.delete(rule.key))
    } catch (error) {
      throw new DependencyError('Internal Server Error', { cause: error })
    }
  }

  return {
    kind: redis ? 'redis' : 'memory',
    trustProxy,
    has: (name) => Object.hasOwn(definitions, name),
    names: () => Object.keys(definitions),
    define(name, definition) {
      if (Object.hasOwn(definitions, name)) return
      checkDefinition(name, definition)
      definitions[name] = definition
    },
    consume: (name, request) => run(name, request, consumeStep),
    peek: (name, request) => run(name, request, peekStep),
    refund: (name, request) => forget(name, request, true),
    reset: (name, request) => forget(name, request, false),
    bucketOf(name, request) {
      const rule = ruleFor(name, request)
      return `${rule.durationSeconds ?? 60}:${rule.key}`
    },
    bucketsByKey: (name) => typeof definitions[name] === 'function',
  }
}

/** The counter of each limiter and window length, made on first use. */
function windowCounters(
  prefix: string,
  redis: RateLimitersOptions['redis'],
  onFallback: () => void,
  now: () => number,
): (name: string, durationSeconds: number) => WindowCounter {
  /** By limiter name, then window length in seconds. */
  const counters = new Map<string, Map<number, WindowCounter>>()
  return (name, durationSeconds) => {
    const byDuration = mapEntry(counters, name, () => new Map<number, WindowCounter>())
    return mapEntry(byDuration, durationSeconds, () => {
      const keyPrefix = `${prefix}:${name}:${durationSeconds}`
      return redis
        ? new RedisWindows(redis, { keyPrefix, durationSeconds, onFallback, now })
        : new MemoryWindows(durationSeconds * 1000, now)
    })
  }
}

/** The rule a limiter applies to this request. */
function ruleOf(
  definitions: Record<string, LimiterDefinition>,
  name: string,
  request: LimitRequest,
): LimitRule {
  const definition = definitions[name]
  if (!definition) throw new TypeError(`No rate limiter named ${JSON.stringify(name)}`)
  if (typeof definition !== 'function') {
    // Checked when the limiter was defined.
    return perIp(request, definition.points, definition.durationSeconds)
  }
  const rule = definition(request)
  checkRule(name, rule)
  return rule
}

/** The warning that Redis is away, at most once per `WARN_EVERY_MS`. */
function fallbackWarning(logger: Logger | undefined): () => void {
  let lastWarning = 0
  return () => {
    const time = Date.now()
    if (time - lastWarning < WARN_EVERY_MS) return
    lastWarning = time
    logger?.warn(
      'Rate limiting cannot reach Redis: each instance enforces the limits in its own memory until Redis answers',
    )
  }
}

function logReached(
  logger: Logger | undefined,
  limiter: string,
  request: LimitRequest,
  rule: LimitRule,
  result: LimitResult,
): void {
  const { ip, method, path } = request
  const fields = { limiter, ip, method, path, limit: rule.points }
  logger?.info({ ...fields, retryAfterSeconds: result.resetSeconds }, 'rate limit reached')
}

const consumeStep = (windows: WindowCounter, key: string) => windows.consume(key)
const peekStep = (windows: WindowCounter, key: string) => windows.get(key)

function limitResult(rule: LimitRule, counted: WindowCount | undefined): LimitResult {
  const consumed = counted?.count ?? 0
  return {
    allowed: consumed <= rule.points,
    limit: rule.points,
    remaining: Math.max(rule.points - consumed, 0),
    resetSeconds: counted ? Math.max(Math.ceil(counted.msLeft / 1000), 0) : 0,
  }
}

function checkDefinition(name: string, definition: LimiterDefinition): void {
  if (!/^[A-Za-z0-9_.:-]+$/.test(name)) {
    throw new TypeError(`createRateLimiters: invalid limiter name ${JSON.stringify(name)}`)
  }
  if (typeof definition !== 'function') checkRule(name, { key: 'ip', ...definition })
}

function checkRule(name: string, rule: LimitRule): void {
  if (!rule || typeof rule.key !== 'string' || rule.key === '') {
    throw new TypeError(`Rate limiter ${name}: a rule needs a non-empty key`)
  }
  if (!Number.isInteger(rule.points) || rule.points < 1) {
    throw new TypeError(`Rate limiter ${name}: points must be a positive integer`)
  }
  const duration = rule.durationSeconds ?? 60
  if (!Number.isInteger(duration) || duration < 1) {
    throw new TypeError(`Rate limiter ${name}: durationSeconds must be a positive integer`)
  }
}
