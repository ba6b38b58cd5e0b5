import { ConfigError } from '../core/config/parse-env.ts'
import type { Database } from './database.ts'

/** Options of `checkDatabase`. */
export interface CheckDatabaseOptions {
  /** How long the database may take to answer (default 5000 ms). */
  timeoutMs?: number
}

/**
 * Checks at start-up that the database answers, so that an app pointed at a database that does
 * not exist (or a wrong password, a server that is down) stops with one line saying what is
 * wrong instead of starting and answering 500 to every request. Throws a `ConfigError` naming
 * `DATABASE_URL`; the message never holds the URL's password.
 * @example
 * ```ts
 * const database = await createDatabase(config.databaseUrl)
 * await checkDatabase(database)
 * ```
 */
export async function checkDatabase(
  database: Database,
  { timeoutMs = 5_000 }: CheckDatabaseOptions = {},
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('timeout'), { code: 'KILN_TIMEOUT' })),
      timeoutMs,
    )
  })
  try {
    await Promise.race([database.ping(), late])
  } catch (error) {
    throw new ConfigError(
      { DATABASE_URL: unreachableReason(error, timeoutMs) },
      'The database cannot be used',
    )
  } finally {
    clearTimeout(timer)
  }
}

/** What went wrong, in the words a developer acts on; the driver's own message otherwise. */
function unreachableReason(error: unknown, timeoutMs: number): string {
  // Drizzle wraps the driver's error ("Failed query: select 1"): the driver's says what is wrong.
  let driver = error as { code?: unknown; message?: unknown; cause?: unknown }
  while (driver.code === undefined && driver.cause instanceof Error) {
    driver = driver.cause as typeof driver
  }
  const { code, message } = driver
  const said = typeof message === 'string' ? message : String(error)
  switch (code) {
    case '3D000':
      return `${said}: create it (createdb, or CREATE DATABASE) or correct the name in DATABASE_URL`
    case '28P01':
    case '28000':
      return `${said}: correct the user or password in DATABASE_URL`
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${said}: no PostgreSQL server answers there; start it or correct the host and port in DATABASE_URL`
    case 'KILN_TIMEOUT':
      return `no answer within ${timeoutMs} ms: check the host and port in DATABASE_URL and that the server is up`
    default:
      return said
  }
}
