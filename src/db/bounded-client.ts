import type pg from 'pg'

type Callback = (error: Error | null | undefined, result?: unknown) => void

/**
 * The pg client of a pool whose `query_timeout` gives up on a statement: it also closes the
 * connection. pg only stops waiting, and the connection stays busy with the unanswered
 * statement, so a server or pooler that stopped answering (a frozen host) would hold it, and
 * every query queued behind it, for as long as it stays silent. Closed, the pool opens another
 * and the server ends the abandoned statement when it sees the connection gone.
 */
export function closedOnQueryTimeout(Client: typeof pg.Client): typeof pg.Client {
  const query = Client.prototype.query as (...args: unknown[]) => unknown
  class BoundedClient extends Client {}
  BoundedClient.prototype.query = function boundedQuery(this: pg.Client, ...args: unknown[]) {
    const last = args.length - 1
    const callback = args[last]
    if (typeof callback === 'function') {
      args[last] = (error: Error | null | undefined, result?: unknown) => {
        if (isQueryTimeout(error)) closeConnection(this, error as Error)
        ;(callback as Callback)(error, result)
      }
      return query.apply(this, args)
    }
    const result = query.apply(this, args)
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isQueryTimeout(error)) closeConnection(this, error as Error)
      })
    }
    return result
  } as typeof Client.prototype.query
  return BoundedClient
}

function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout'
}

/**
 * Destroys the socket: pg reports the end to the queries still queued. A client checked out of
 * the pool goes back at once, as broken, so the pool drops it and frees its place: Drizzle
 * never releases a client whose `BEGIN` failed, which would leak one place per transaction
 * tried during an outage, until the pool had none. Its later `release()` does nothing. The
 * error the end raises on the client is expected: a listener keeps it from going unhandled.
 */
function closeConnection(client: pg.Client, error: Error): void {
  const checkedOut = client as unknown as { release?: (error?: Error) => void }
  const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection
    ?.stream
  client.on('error', () => {})
  stream?.destroy()
  if (typeof checkedOut.release === 'function') {
    const release = checkedOut.release
    checkedOut.release = () => {}
    release(error)
  }
}
