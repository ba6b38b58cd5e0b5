import { connect, createServer, type Server, type Socket } from 'node:net'

const HEAD_END = Buffer.from('\r\n\r\n')
const MAX_HEAD_BYTES = 64 * 1024

/**
 * A loopback reverse proxy like the ones apps run behind: for each connection it reads the
 * request head, appends the address of the client it saw to `X-Forwarded-For` (after whatever
 * the client sent there) and then relays bytes both ways as they come, bodies included, so an
 * app that answers before a body ends is seen doing so. One request per connection, as the
 * tests send them (`Connection: close`); `Host` is passed through, so the app sees its public
 * address.
 */
export class ForwardingProxy {
  readonly #target: { host: string; port: number }
  readonly #sockets = new Set<Socket>()
  #server: Server | undefined
  url = ''

  constructor(target: string) {
    const { hostname, port } = new URL(target)
    this.#target = { host: hostname, port: Number(port) }
  }

  async start(): Promise<this> {
    this.#server = createServer((client) => this.#forward(client))
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  #forward(client: Socket): void {
    this.#track(client)
    let head = Buffer.alloc(0)
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf(HEAD_END)
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) client.destroy()
        return
      }
      client.off('data', onHead)
      client.pause()
      const address = (client.remoteAddress ?? 'unknown').replace(/^::ffff:/, '')
      const upstream = this.#track(connect(this.#target))
      upstream.write(
        `${withForwardedFor(head.subarray(0, end).toString('latin1'), address)}\r\n\r\n`,
      )
      upstream.write(head.subarray(end + HEAD_END.length))
      relayBody(client, upstream)
      upstream.pipe(client)
      // The app may answer and close before the body ends: pass its answer on, then close.
      upstream.on('error', () => client.destroySoon())
      upstream.on('close', () => client.destroySoon())
      client.on('error', () => upstream.destroy())
      client.on('close', () => upstream.destroy())
      client.resume()
    }
    client.on('data', onHead)
    client.on('error', () => client.destroy())
  }

  #track(socket: Socket): Socket {
    this.#sockets.add(socket)
    socket.on('close', () => this.#sockets.delete(socket))
    return socket
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    const server = this.#server
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/**
 * The body, client to app, a chunk at a time: the next one is written only once the last is
 * flushed and the event loop has turned, so what the app sent back is read first. An answer
 * followed at once by a close (a 413 mid-body) is then passed on, not lost to the failed
 * write the close causes (a failed write destroys the socket with the answer unread).
 */
function relayBody(client: Socket, upstream: Socket): void {
  client.on('data', (chunk: Buffer) => {
    client.pause()
    setImmediate(() => {
      if (upstream.destroyed) return
      upstream.write(chunk, () => setImmediate(() => client.resume()))
    })
  })
  client.on('end', () => upstream.end())
}

/** The head with `address` appended to its (last) X-Forwarded-For, or a new one. */
function withForwardedFor(head: string, address: string): string {
  const lines = head.split('\r\n')
  const last = lines.findLastIndex((line) => /^x-forwarded-for\s*:/i.test(line))
  if (last < 0) lines.push(`X-Forwarded-For: ${address}`)
  else lines[last] = `${lines[last]}, ${address}`
  return lines.join('\r\n')
}
