import type pg from 'pg'

/** Most a cancel waits for its own connection: past that, the statement timeout ends the query. */
const CANCEL_CONNECT_MS = 2_000

/**
 * Sends PostgreSQL's CancelRequest for what `client`'s backend runs now, on a new connection to
 * the same server (or pooler: PgBouncer forwards it), and resolves once it is written.
 */
export function sendCancelRequest(pool: pg.Pool, client: pg.PoolClient): Promise<void> {
  const { processID, secretKey, connectionParameters } = client as unknown as {
    processID: number | null
    secretKey: number | null
    connectionParameters: { host: string; port: number }
  }
  if (processID === null || secretKey === null) return Promise.resolve()
  const Client = (pool as unknown as { Client: typeof pg.Client }).Client
  const { connection } = new Client(pool.options) as unknown as {
    connection: {
      connect(port: number | string, host?: string): void
      cancel(processID: number, secretKey: number): void
      on(event: string, listener: (...args: unknown[]) => void): void
      end(): void
      stream: { destroy(): void }
    }
  }
  const { host, port } = connectionParameters
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      connection.stream.destroy()
      resolve()
    }
    const timer = setTimeout(done, CANCEL_CONNECT_MS)
    connection.on('connect', () => {
      connection.cancel(processID, secretKey)
      // The server closes the connection once it has read the request.
      connection.on('end', done)
    })
    connection.on('error', done)
    if (host.startsWith('/')) connection.connect(`${host}/.s.PGSQL.${port}`)
    else connection.connect(port, host)
  })
}
