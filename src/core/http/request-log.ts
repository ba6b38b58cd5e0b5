import type { Context, MiddlewareHandler } from 'hono'
import type { Logger } from '../logger.ts'
import { OUTAGE_ANSWER } from '../outages.ts'
import { contextValue, setContextValue } from './context-value.ts'

const ACTOR = 'kiln.requestActor'

/**
 * Names who made this request for the request log: the API key's name, the OAuth client. The
 * middleware that verified the credential sets it; nothing else reads it.
 */
export function setRequestActor(c: Context, actor: string): void {
  setContextValue(c, ACTOR, actor)
}

/** Options of `requestLog`. */
export interface RequestLogOptions {
  logger: Logger
  /**
   * The level of the line for answers below 500 (default `info`); 5xx are logged at `warn`. At
   * `debug`, a production app (LOG_LEVEL=info) skips the line at almost no cost.
   */
  level?: 'info' | 'debug'
}

/**
 * One line per request: method, path (without the query, which may hold personal data), status,
 * time in milliseconds and, when known, the key or client that made it. A 5xx is also logged
 * with its error by the app's error handler; this line is the access log beside it.
 * @example
 * ```ts
 * app.use('*', requestLog({ logger, level: 'debug' }))
 * ```
 */
export function requestLog(options: RequestLogOptions): MiddlewareHandler {
  const { logger } = options
  const level = options.level ?? 'info'
  return async function requestLogMiddleware(c, next) {
    const started = performance.now()
    try {
      await next()
    } finally {
      logRequest(c, logger, level, started)
    }
  }
}

function logRequest(c: Context, logger: Logger, level: 'info' | 'debug', started: number): void {
  const status = c.res.status
  // Below the logger's level nothing is built: an app can leave the line on at `debug`.
  if (status < 500 && !logger.isLevelEnabled(level)) return
  const ms = Math.round((performance.now() - started) * 10) / 10
  const actor = contextValue<string>(c, ACTOR)
  const line = { method: c.req.method, path: c.req.path, status, ms, ...(actor && { actor }) }
  const message = `${c.req.method} ${c.req.path} ${status} ${ms}ms${actor ? ` ${actor}` : ''}`
  // An answer given because a dependency is down: the outage's own lines tell it.
  if (status >= 500 && contextValue(c, OUTAGE_ANSWER) === true) logger.debug(line, message)
  else if (status >= 500) logger.warn(line, message)
  else logger[level](line, message)
}
