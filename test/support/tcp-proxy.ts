import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A loopback TCP proxy in front of a real service (PostgreSQL, Redis) that a test can cut:
 * `block()` drops every open connection and every new one, as a network partition or a dead
 * server would look to the client; `unblock()` lets traffic through again.
 */
export class TcpProxy {
  readonly #target: { host: string; port: number }
  readonly #sockets = new Set<Socket>()
  #server: Server | undefined
  #blocked = false
  port = 0

  constructor(target: { host: string; port: number }) {
    this.#target = target
  }

  static forUrl(url: string): TcpProxy {
    const { hostname, port, protocol } = new URL(url)
    const fallback = protocol.startsWith('redis') ? 6379 : 5432
    return new TcpProxy({ host: hostname, port: Number(port || fallback) })
  }

  /** The service URL with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(this.port)
    return parsed.toString()
  }

  async start(): Promise<this> {
    this.#server = createServer((client) => {
      if (this.#blocked) {
        client.destroy()
        return
      }
      const upstream = createConnection(this.#target)
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket)
        socket.on('close', () => this.#sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.port = typeof address === 'object' && address ? address.port : 0
    return this
  }

  block(): void {
    this.#blocked = true
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
  }

  unblock(): void {
    this.#blocked = false
  }

  async close(): Promise<void> {
    this.block()
    await new Promise<void>((resolve) =>
      this.#server ? this.#server.close(() => resolve()) : resolve(),
    )
  }
}
