import type { Logger } from '../core/index.ts'
import { ToolError } from './tool-error.ts'

const CONSTRAINT_MESSAGES: Array<[RegExp, string]> = [
  [
    /^(23505|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY))$/,
    'a record with the same unique value already exists',
  ],
  [
    /^(23503|SQLITE_CONSTRAINT_FOREIGNKEY)$/,
    'a referenced record does not exist, or other records still reference this one',
  ],
  [/^(23502|SQLITE_CONSTRAINT_NOTNULL)$/, 'a required field is missing'],
  [/^(23514|SQLITE_CONSTRAINT_CHECK)$/, 'a check constraint failed'],
  [/^(22\w{3}|SQLITE_MISMATCH|SQLITE_TOOBIG)$/, 'a value does not fit its column'],
  [/^(23\w{3}|SQLITE_CONSTRAINT\w*)$/, 'a constraint failed'],
]

/**
 * Runs a statement; a constraint or data error becomes a tool error that names the kind of
 * problem (never the statement or its parameters), anything else is logged and reported as a
 * database failure.
 */
export async function guardDatabase<T>(
  action: string,
  work: () => Promise<T>,
  logger: Logger | undefined,
): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ToolError) throw error
    const cause = driverError(error)
    const code = (cause as { code?: unknown } | undefined)?.code
    if (typeof code === 'string') {
      for (const [pattern, message] of CONSTRAINT_MESSAGES) {
        if (pattern.test(code)) throw new ToolError(`Could not ${action}: ${message}`)
      }
    }
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
