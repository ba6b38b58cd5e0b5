import type { Context, ErrorHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { KilnError, RequestAbortedError, TooManyRequestsError } from './errors.ts'
import { hasResponseHeader } from './http/plain-response.ts'
import { NO_SNIFF } from './http/security-headers.ts'
import type { Logger } from './logger.ts'
import { MIGRATE_HINT, missingTable } from './missing-table.ts'

/** Options of `errorHandler`. */
export interface ErrorHandlerOptions {
  logger: Logger
}

/**
 * The one table from errors to responses, installed with `app.onError(errorHandler(...))`.
 * Client errors answer `{ error, ...details }`; anything else is logged and answers a
 * generic 500 `{ error }` without a stack.
 */
export function errorHandler({ logger }: ErrorHandlerOptions): ErrorHandler {
  /** Tables already reported missing: the operator reads it once, not once per request. */
  const reportedTables = new Set<string>()
  return function kilnErrorHandler(err: Error, c: Context) {
    c.header(NO_SNIFF.name, NO_SNIFF.value)
    if (err instanceof KilnError) {
      if (err.status >= 500) {
        logger.error({ err: err.cause ?? err, code: err.code, path: c.req.path }, err.message)
      }
      if (err instanceof RequestAbortedError) {
        logger.debug({ method: c.req.method, path: c.req.path }, 'client closed the request')
      }
      if (err instanceof TooManyRequestsError) {
        c.header('Retry-After', String(err.retryAfterSeconds))
      }
      if (err.status === 401 && !hasResponseHeader(c, 'WWW-Authenticate')) {
        c.header('WWW-Authenticate', 'Bearer')
      }
      const body =
        err.status >= 500 ? { error: err.message } : { error: err.message, ...err.details }
      return c.json(body, err.status as 400)
    }
    if (err instanceof HTTPException) {
      const status = err.status
      if (status >= 500) logger.error({ err, path: c.req.path }, 'HTTP exception')
      const message = err.message || defaultMessage(status)
      return c.json({ error: message }, status)
    }
    const table = missingTable(err)
    if (table !== undefined) {
      if (!reportedTables.has(table)) {
        reportedTables.add(table)
        logger.error({ table }, `The database has no table "${table}": ${MIGRATE_HINT}`)
      }
      return c.json({ error: 'Service Unavailable: the database is not migrated' }, 503)
    }
    logger.error({ err, path: c.req.path }, 'Unhandled error')
    return c.json({ error: 'Internal Server Error' }, 500)
  }
}

function defaultMessage(status: number): string {
  switch (status) {
    case 400:
      return 'Bad Request'
    case 401:
      return 'Unauthenticated'
    case 403:
      return 'Forbidden'
    case 404:
      return 'Not Found'
    case 413:
      return 'Payload Too Large'
    case 415:
      return 'Unsupported Media Type'
    default:
      return 'Error'
  }
}
