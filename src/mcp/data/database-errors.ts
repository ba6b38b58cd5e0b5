import { KilnError } from '../../core/errors.ts'
import type { Logger } from '../../core/index.ts'
import {
  classifyDatabaseError,
  type DatabaseDataError,
  type DatabaseErrorKind,
} from '../../db/database-errors.ts'
import { QueryTimeoutError } from '../../db/query-budget.ts'
import { ToolError } from '../tool-error.ts'

/** What a tool says for each kind of data error (never the statement or its parameters). */
const MESSAGES: Record<DatabaseErrorKind, string> = {
  unique: 'a record with the same unique value already exists',
  'foreign-key': 'a referenced record does not exist, or other records still reference this one',
  'not-null': 'a required field is missing',
  check: 'a check constraint failed',
  'out-of-range': 'a value does not fit its column',
  data: 'a value does not fit its column',
  restrict: 'a constraint failed',
  constraint: 'a constraint failed',
}

/** A unique violation names its columns, all of them for a unique pair (never their values). */
function messageOf(error: DatabaseDataError): string {
  if (error.kind !== 'unique' || error.fields.length === 0) return MESSAGES[error.kind]
  const names = error.fields.join(' and ')
  return `a record with the same ${names} already exists`
}

/**
 * Runs a statement; a constraint or data error becomes a tool error that names the kind of
 * problem (never the statement or its parameters), a list past its query budget a tool error
 * that says so (logged with the query's shape, as the REST list's 503), anything else is
 * logged and reported as a database failure.
 */
export async function guardDatabase<T>(
  action: string,
  work: () => Promise<T>,
  logger: Logger | undefined,
): Promise<T> {
  try {
    return await work()
  } catch (thrown) {
    if (thrown instanceof ToolError) throw thrown
    // The resource operations answer a violation as REST's 422 or 409, the driver's error its
    // cause: the tools word it from that error.
    const error = thrown instanceof KilnError && thrown.cause !== undefined ? thrown.cause : thrown
    if (error instanceof QueryTimeoutError) {
      logger?.error({ code: error.code, shape: error.shape }, `mcp: ${action}: ${error.message}`)
      throw new ToolError(error.message)
    }
    const classified = classifyDatabaseError(error)
    if (classified) throw new ToolError(`Could not ${action}: ${messageOf(classified)}`)
    const cause = driverError(error)
    const code = (cause as { code?: unknown } | undefined)?.code
    logger?.error(
      { code, error: cause instanceof Error ? cause.message : String(cause) },
      `mcp: ${action} failed`,
    )
    throw new ToolError(`Could not ${action}: the database failed (the error was logged)`)
  }
}

/**
 * The driver's own error: drizzle-orm 0.44 and later wrap it ("Failed query: …") with the
 * original as `cause`. Walked by shape, not by drizzle's class, which drizzle-orm exports from
 * its root only since 0.44.4.
 */
function driverError(error: unknown): unknown {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (typeof (current as { code?: unknown }).code === 'string') return current
    current = current.cause
  }
  return error instanceof Error && error.cause !== undefined ? error.cause : error
}
