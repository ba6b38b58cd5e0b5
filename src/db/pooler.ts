import type pg from 'pg'

/**
 * What stands between kiln and PostgreSQL:
 * - `'transaction'`: a pooler that hands a server connection to a client for one transaction
 *   at a time (PgBouncer's `pool_mode = transaction`, Supabase's and Neon's poolers). Nothing
 *   that outlives a transaction may be left on a connection: no named prepared statement, no
 *   pipeline whose queries another client's connection would answer, no LISTEN, no session lock.
 * - `'none'`: the server itself, or a pooler in session mode.
 */
export type PoolerMode = 'transaction' | 'none'

const POOLER_MODES: readonly string[] = ['transaction', 'none'] satisfies PoolerMode[]

/** The `postgres://` URL's query parameter that names the pooler mode. */
export const POOLER_PARAMETER = 'pooler'

/**
 * The pooler mode of a `postgres://` URL and the URL pg should open (without kiln's
 * `pooler` parameter): `given` (the `pooler` option of `createDatabase`) wins, then the URL's
 * `?pooler=transaction|none`, then the hosts known to pool in transaction mode.
 */
export function poolerOfUrl(
  url: string,
  given?: PoolerMode,
): { url: string; pooler: PoolerMode; detected: boolean } {
  if (given !== undefined && !POOLER_MODES.includes(given)) {
    throw new TypeError(`createDatabase: pooler must be 'transaction' or 'none' (got ${given})`)
  }
  const parsed = new URL(url)
  const named = parsed.searchParams.get(POOLER_PARAMETER)
  if (named !== null && !POOLER_MODES.includes(named)) {
    throw new TypeError(
      `createDatabase: the URL's ?pooler= must be transaction or none (got ${named})`,
    )
  }
  parsed.searchParams.delete(POOLER_PARAMETER)
  const bare = named === null ? url : parsed.toString()
  if (given !== undefined) return { url: bare, pooler: given, detected: false }
  if (named !== null) return { url: bare, pooler: named as PoolerMode, detected: false }
  const detected = knownTransactionPooler(parsed)
  return { url: bare, pooler: detected ? 'transaction' : 'none', detected }
}

/**
 * Hosted poolers recognisable from their address: Supabase's Supavisor answers in transaction
 * mode on port 6543 (5432 is its session mode), Neon's `-pooler` hosts run PgBouncer in
 * transaction mode. A self-hosted PgBouncer cannot be told apart from a server: name it.
 */
function knownTransactionPooler(url: URL): boolean {
  const host = url.hostname.toLowerCase()
  if (host.endsWith('.pooler.supabase.com') && url.port === '6543') return true
  return host.endsWith('.neon.tech') && (host.split('.')[0] ?? '').endsWith('-pooler')
}

/**
 * The pg client of a pool behind a transaction pooler: every statement it sends is unnamed,
 * so Drizzle's `.prepare(name)` (the generated API's show route, kiln's list pages) still
 * runs, parsed again each time, as the unnamed statement of its own Parse/Bind/Execute/Sync.
 * A named statement would be prepared on one server connection and executed on another
 * (`prepared statement "…" does not exist`, or `already exists`).
 */
export function unnamedStatementClient(Client: typeof pg.Client): typeof pg.Client {
  const query = Client.prototype.query as (...args: unknown[]) => unknown
  class UnnamedStatementClient extends Client {}
  UnnamedStatementClient.prototype.query = function unnamedQuery(
    this: pg.Client,
    config: unknown,
    ...rest: unknown[]
  ) {
    const named =
      typeof config === 'object' &&
      config !== null &&
      !('submit' in config) &&
      (config as { name?: unknown }).name !== undefined
    return query.call(this, named ? { ...config, name: undefined } : config, ...rest)
  } as typeof Client.prototype.query
  return UnnamedStatementClient
}
