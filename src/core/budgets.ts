/**
 * How long kiln waits on a dependency before the request answers 503, by default. Every wait
 * has one: the app config reads each from the environment (docs/deployment.md, "Time budgets").
 */

/** A pooled PostgreSQL connection: opening one, or waiting for a free one (`DATABASE_CONNECT_TIMEOUT_MS`). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000

/**
 * One statement's answer on an open connection (`DATABASE_QUERY_TIMEOUT_MS`): past it the
 * connection is closed, so a server or pooler that stopped answering holds nothing. By default
 * the statement timeout plus this margin (7 s with the default 5 s), so that the server
 * cancels a slow list query first and the answer names its shape.
 */
export const QUERY_TIMEOUT_MARGIN_MS = 2_000

/** The query budget without a statement timeout (`DATABASE_STATEMENT_TIMEOUT_MS=0`). */
export const DEFAULT_QUERY_TIMEOUT_MS = 7_000

/** The default `DATABASE_QUERY_TIMEOUT_MS` beside a statement timeout. */
export function defaultQueryTimeoutMs(statementTimeoutMs: number): number {
  return statementTimeoutMs > 0
    ? statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS
    : DEFAULT_QUERY_TIMEOUT_MS
}

/** How long a list or search query may run on the server (`DATABASE_STATEMENT_TIMEOUT_MS`). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000

/** How long a budgeted query waits for its turn (`DATABASE_SLOW_QUERY_WAIT_MS`). */
export const DEFAULT_SLOW_QUERY_WAIT_MS = 5_000

/** One Redis command's answer (`REDIS_COMMAND_TIMEOUT_MS`); blocking connections wait. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 5_000
