import type { Context, ErrorHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { codeOfStatus, type KilnErrorCode, messageOfStatus } from './error-catalogue.ts'
import { DependencyUnavailableError, isKilnError, messageOf } from './errors.ts'
import { contextValue, setContextValue } from './http/context-value.ts'
import { hasResponseHeader } from './http/plain-response.ts'
import { NO_SNIFF } from './http/security-headers.ts'
import type { Logger } from './logger.ts'
import { MIGRATE_HINT, missingTable } from './missing-table.ts'
import { OUTAGE_ANSWER, outageLogOf, outageOf } from './outages.ts'

/** Options of `errorHandler`. */
export interface ErrorHandlerOptions {
  logger: Logger
}

/**
 * The one table from errors to responses, installed with `app.onError(errorHandler(...))`.
 * A `KilnError` (of any copy of kiln) renders itself: its catalogue status, `{ error,
 * code, ...details }` and its own headers; a dependency that did not answer (`outageOf`) answers
 * 503 with `Retry-After` and counts in the logger's `OutageLog` (a line when it goes down, one
 * when it is back); anything else is logged and answers a generic 500 `{ error, code }` without
 * a stack. @see ./error-catalogue.ts
 * @example
 * ```ts
 * app.onError(errorHandler({ logger }))
 * ```
 */
export function errorHandler({ logger }: ErrorHandlerOptions): ErrorHandler {
  /** Tables already reported missing: the operator reads it once, not once per request. */
  const reportedTables = new Set<string>()
  const outages = outageLogOf(logger)
  return function kilnErrorHandler(given: Error, c: Context) {
    setContextValue(c, ANSWERED, true)
    c.header(NO_SNIFF.name, NO_SNIFF.value)
    const dependency = dependencyOf(given)
    if (dependency !== undefined) {
      outages.failed(dependency, given, { path: c.req.path })
      setContextValue(c, OUTAGE_ANSWER, true)
    }
    // A dependency that did not answer is a 503 to try again, also when a capability wrapped it
    // as its own server error (the key provider's DependencyError).
    const err =
      dependency !== undefined && (!isKilnError(given) || given.status === 500)
        ? new DependencyUnavailableError(dependency, { cause: given })
        : given
    if (isKilnError(err)) {
      if (err.status >= 500 && dependency === undefined) {
        logger.error({ err: err.cause ?? err, code: err.code, path: c.req.path }, err.message)
      }
      if (err.code === 'request_aborted') {
        logger.debug({ method: c.req.method, path: c.req.path }, 'client closed the request')
      }
      for (const [name, value] of Object.entries(err.headers())) c.header(name, value)
      if (err.status === 401 && !hasResponseHeader(c, 'WWW-Authenticate')) {
        c.header('WWW-Authenticate', 'Bearer')
      }
      return c.json(err.body(), err.status as 400)
    }
    if (err instanceof HTTPException) {
      const status = err.status
      if (status >= 500) logger.error({ err, path: c.req.path }, 'HTTP exception')
      return c.json(
        { error: err.message || messageOfStatus(status), code: codeOfStatus(status) },
        status,
      )
    }
    const table = missingTable(err)
    if (table !== undefined) {
      if (!reportedTables.has(table)) {
        reportedTables.add(table)
        logger.error({ table }, `The database has no table "${table}": ${MIGRATE_HINT}`)
      }
      return c.json(catalogueBody('database_not_migrated'), 503)
    }
    logger.error({ err, path: c.req.path }, 'Unhandled error')
    return c.json(catalogueBody('internal_error'), 500)
  }
}

/** Set on a request whose error `errorHandler` answered. */
const ANSWERED = 'kiln.errorAnswered'

/**
 * Answers the error a handler threw (`c.error`) with `handler` when the app's own error handler
 * did not: an app without `app.onError(errorHandler(…))`, or with one of its own. Called by a
 * group's guard after its handlers, so the group answers kiln's `{ error, code }` whoever mounts
 * it, without an `onError` of its own: Hono wraps every handler of a group that has one in an
 * error boundary of its own when it is mounted (`app.route`), which on the API's routes cost
 * about a tenth of what a request allocates (docs/performance.md, "The tail at equal load").
 */
export function answerUnhandledError(c: Context, handler: ErrorHandler): void {
  if (!c.error || contextValue(c, ANSWERED)) return
  c.res = handler(c.error, c) as Response
}

/**
 * The dependency an error says did not answer, if any. A client that hung up mid-upload
 * (`request_aborted`) is the client's doing, not an outage, whatever its socket error says.
 */
function dependencyOf(given: Error): string | undefined {
  if (!isKilnError(given)) return outageOf(given)
  return given.code === 'request_aborted' ? undefined : outageOf(given.cause)
}

/** The body of a code with its public message: `{ error, code }`. */
const catalogueBody = (code: KilnErrorCode) => ({ error: messageOf(code), code })
