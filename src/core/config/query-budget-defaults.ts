/**
 * The defaults of the database's query budget. They live in core/ because the app's config
 * (`STATEMENT_TIMEOUT_MS`, `SLOW_QUERY_WAIT_MS`) defaults to them and core/ imports nothing of
 * db/; db/query-budget.ts applies them.
 */

/** The time a budgeted query may run on PostgreSQL before the server cancels it (5 s). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000

/** How long a query that may be slow waits for its turn before it answers 503 (5 s). */
export const DEFAULT_SLOW_QUERY_WAIT_MS = 5_000
