import { z } from 'zod'
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  DEFAULT_SLOW_QUERY_WAIT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
} from '../budgets.ts'
import { parseTrustedProxies, type TrustProxy } from '../http/client-ip.ts'
import type { LogFormat } from '../logger.ts'
import { Secret } from '../secret.ts'
import { type Env, envBoolean, envUrl, parseEnv } from './parse-env.ts'

/**
 * `TRUST_PROXY`: `true`/`false` (one proxy or none), a number of proxies (`2`), or a comma
 * list of proxy addresses and CIDR ranges (`10.0.0.0/8,192.168.1.5`).
 */
const envTrustProxy = z.string().transform((value, ctx): TrustProxy => {
  const boolean = envBoolean.safeParse(value)
  if (boolean.success) return boolean.data
  if (/^\s*\d+\s*$/.test(value)) return Number(value)
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  try {
    parseTrustedProxies(entries)
    if (entries.length > 0) return entries
  } catch {
    // reported below
  }
  ctx.addIssue({
    code: 'custom',
    message: 'expected true, false, a number of proxies, or a comma list of proxy IPs/CIDRs',
  })
  return z.NEVER
})

const databaseUrl = z.string().refine(
  (value) => {
    if (/^(sqlite|file|pglite):/.test(value)) return true
    try {
      return ['postgres:', 'postgresql:'].includes(new URL(value).protocol)
    } catch {
      return false
    }
  },
  {
    message:
      'expected a postgres://… URL, sqlite:<path> / file:<path> for SQLite, or pglite:<dir> for embedded Postgres',
  },
)

/** A time budget in milliseconds, `min` or more (0: none, where allowed). */
function milliseconds(min: 0 | 1) {
  return z.coerce
    .number({ message: 'expected a number of milliseconds' })
    .int('expected a whole number of milliseconds')
    .min(
      min,
      min === 0 ? 'expected 0 (none) or more milliseconds' : 'expected 1 or more milliseconds',
    )
}

export const appEnvSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'], {
      message: 'expected development, production or test',
    })
    .default('development'),
  PORT: z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(1, 'expected a port from 1 to 65535')
    .max(65535, 'expected a port from 1 to 65535')
    .default(3000),
  HOST: z.string().default('0.0.0.0'),
  APP_URL: envUrl('expected an absolute http(s) URL, e.g. https://app.example.com', [
    'http:',
    'https:',
  ]).optional(),
  APP_NAME: z.string().optional(),
  APP_KEY: z.string().min(32, 'expected 32 or more random characters').optional(),
  DATABASE_URL: databaseUrl.optional(),
  DATABASE_DIRECT_URL: databaseUrl.optional(),
  DATABASE_CONNECT_TIMEOUT_MS: milliseconds(1).default(DEFAULT_CONNECT_TIMEOUT_MS),
  DATABASE_QUERY_TIMEOUT_MS: milliseconds(0).optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: milliseconds(0).default(DEFAULT_STATEMENT_TIMEOUT_MS),
  DATABASE_SLOW_QUERY_CONCURRENCY: z.coerce
    .number({ message: 'expected a number of queries' })
    .int('expected a whole number of queries')
    .min(1, 'expected 1 or more queries')
    .optional(),
  DATABASE_SLOW_QUERY_WAIT_MS: milliseconds(0).default(DEFAULT_SLOW_QUERY_WAIT_MS),
  REDIS_URL: envUrl('expected a redis://… or rediss://… URL', ['redis:', 'rediss:']).optional(),
  REDIS_COMMAND_TIMEOUT_MS: milliseconds(1).default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'expected one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty'], { message: 'expected json or pretty' }).optional(),
  TRUST_PROXY: envTrustProxy.default(false),
  ALLOWED_HOSTS: z
    .string()
    .regex(/^[\w.:[\]-]+(,[\w.:[\]-]+)*$/, 'expected host or host:port names, comma-separated')
    .optional(),
})

/** The app's settings read from the environment by `loadAppConfig`. */
export interface AppConfig {
  env: 'development' | 'production' | 'test'
  port: number
  host: string
  /** Public base URL without a trailing slash; defaults to http://localhost:<port>. */
  appUrl: string
  appUrlFromEnv: boolean
  appName: string
  /**
   * `APP_KEY`: the app's own secret, 32+ characters, the same on every instance. It signs the
   * list cursors (`setCursorKey(config.appKey)`). Unset, `MCP_TOKEN_SECRET` stands in (already
   * shared by every instance; cursors derive their own key from it per table), else each
   * process signs with a random key.
   */
  appKey: Secret | undefined
  /** `DATABASE_URL`, which may carry a password: prints as `<redacted>`, `reveal()` reads it. */
  databaseUrl: Secret | undefined
  /**
   * `DATABASE_CONNECT_TIMEOUT_MS` (default 5000): how long a request waits for a pooled
   * PostgreSQL connection (opening one, or a free one) before it answers 503. Pass it to
   * `createDatabase(url, { connectTimeoutMs })`.
   */
  databaseConnectTimeoutMs: number
  /**
   * `DATABASE_QUERY_TIMEOUT_MS` (0: none): how long a statement waits for its answer on an open
   * connection before the connection is closed and the request answers 503. Unset,
   * `createDatabase` takes the statement timeout plus 2 s (7000 by default). Pass it to
   * `createDatabase(url, { queryTimeoutMs })`.
   */
  databaseQueryTimeoutMs: number | undefined
  /**
   * `DATABASE_DIRECT_URL`: the server's own address when `DATABASE_URL` is a transaction
   * pooler, where the API-key change feed LISTENs. Pass it to `createDatabase(url, { directUrl })`.
   */
  databaseDirectUrl: Secret | undefined
  /**
   * `DATABASE_STATEMENT_TIMEOUT_MS` (default 5000; 0: no limit): how long a list or search
   * query may run on PostgreSQL before it is cancelled and answered 503. Pass it to
   * `createDatabase(url, { statementTimeoutMs })`.
   */
  databaseStatementTimeoutMs: number
  /**
   * `DATABASE_SLOW_QUERY_CONCURRENCY` (default: the pool beside the pipelined connections): how
   * many of those queries run at once on PostgreSQL; the others wait their turn. Pass it to
   * `createDatabase(url, { slowQueryConcurrency })`.
   */
  databaseSlowQueryConcurrency: number | undefined
  /**
   * `DATABASE_SLOW_QUERY_WAIT_MS` (default 5000; 0: no wait): how long such a query waits for
   * its turn before it answers 503. Pass it to `createDatabase(url, { slowQueryWaitMs })`.
   */
  databaseSlowQueryWaitMs: number
  /** `REDIS_URL`, likewise. */
  redisUrl: Secret | undefined
  /**
   * `REDIS_COMMAND_TIMEOUT_MS` (default 5000): how long a Redis command waits for its answer
   * before it fails (503). Pass it to `createSharedState({ commandTimeoutMs })`.
   */
  redisCommandTimeoutMs: number
  logLevel: string
  /**
   * `LOG_FORMAT`; without it `pretty` in development when standard output is a terminal, `json`
   * otherwise (production, CI, a log collector).
   */
  logFormat: LogFormat
  /** Which proxies' X-Forwarded-For is believed (only proxies you run); see `TrustProxy`. */
  trustProxy: TrustProxy
  /**
   * `Host` names the browser pages and `/mcp` accept besides APP_URL's (DNS-rebinding checks):
   * an instance reached by its own address behind a load balancer.
   */
  allowedHosts: string[]
}

/** What an app sets in place of kiln's defaults, for a variable the environment leaves unset. */
export interface AppConfigDefaults {
  /** `APP_NAME` unless set: the entry point `init` writes passes the package's name. */
  appName?: string
}

/**
 * Reads the variables every kiln app shares. Capabilities parse their own (MSG_*, CDN_*…).
 * @example
 * ```ts
 * const config = loadAppConfig(process.env, { appName: 'tickets' })
 * ```
 */
export function loadAppConfig(env: Env = process.env, defaults: AppConfigDefaults = {}): AppConfig {
  const parsed = parseEnv(appEnvSchema, env)
  const appUrl = (parsed.APP_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, '')
  return {
    env: parsed.NODE_ENV,
    port: parsed.PORT,
    host: parsed.HOST,
    appUrl,
    appUrlFromEnv: parsed.APP_URL !== undefined,
    // Named on the consent, approval and docs pages and as the MCP server's name.
    appName: parsed.APP_NAME ?? defaults.appName ?? 'kiln',
    appKey: cursorKeyOf(parsed.APP_KEY, env.MCP_TOKEN_SECRET),
    databaseUrl: parsed.DATABASE_URL ? new Secret(parsed.DATABASE_URL) : undefined,
    databaseDirectUrl: parsed.DATABASE_DIRECT_URL
      ? new Secret(parsed.DATABASE_DIRECT_URL)
      : undefined,
    databaseConnectTimeoutMs: parsed.DATABASE_CONNECT_TIMEOUT_MS,
    databaseQueryTimeoutMs: parsed.DATABASE_QUERY_TIMEOUT_MS,
    databaseStatementTimeoutMs: parsed.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseSlowQueryConcurrency: parsed.DATABASE_SLOW_QUERY_CONCURRENCY,
    databaseSlowQueryWaitMs: parsed.DATABASE_SLOW_QUERY_WAIT_MS,
    redisUrl: parsed.REDIS_URL ? new Secret(parsed.REDIS_URL) : undefined,
    redisCommandTimeoutMs: parsed.REDIS_COMMAND_TIMEOUT_MS,
    logLevel: parsed.LOG_LEVEL,
    logFormat:
      parsed.LOG_FORMAT ??
      (parsed.NODE_ENV === 'development' && process.stdout.isTTY ? 'pretty' : 'json'),
    trustProxy: parsed.TRUST_PROXY,
    allowedHosts: parsed.ALLOWED_HOSTS?.split(',') ?? [],
  }
}

/**
 * The secret that signs list cursors: `APP_KEY`, else a `MCP_TOKEN_SECRET` long enough to
 * serve (every instance of a cluster has the same one, so a cursor from one instance reads on
 * another), else none, and each process makes a random one.
 */
function cursorKeyOf(appKey: string | undefined, tokenSecret: string | undefined) {
  const key = appKey ?? (tokenSecret && tokenSecret.length >= 32 ? tokenSecret : undefined)
  return key ? new Secret(key) : undefined
}
