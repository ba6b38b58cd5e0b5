import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'

/**
 * HTTP from a chosen loopback address (any of 127.0.0.0/8): the app, or the proxy in front of
 * it, sees each simulated client at its own address, so per-address limits of one scenario do
 * not spend another's budget.
 */
export interface LoopbackResponse {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The `name=value` pairs of `Set-Cookie`. */
  cookies: string[]
  location: string | undefined
}

export interface SendOptions {
  method?: string
  headers?: Record<string, string>
  body?: string
  /** The local address to send from, e.g. `127.0.0.7`. */
  from?: string
}

export function send(url: string, options: SendOptions = {}): Promise<LoopbackResponse> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
        headers: {
          ...(options.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
        localAddress: options.from,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            cookies: (res.headers['set-cookie'] ?? []).map((line) => line.split(';')[0] ?? ''),
            location: res.headers.location,
          }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

export interface StreamedBodyResult {
  /** The answer's status, or `closed` when the connection ended without one. */
  status: number | 'closed'
  /** Bytes of the body written before the answer came (or the connection closed). */
  written: number
}

/**
 * Streams up to `total` bytes of body in 64 KiB chunks, stopping as soon as the server
 * answers. A server that reads a body to its end before refusing it answers only after all
 * `total` bytes; one that stops at its limit answers long before. Without `content-length`
 * among the headers the body is chunked. A raw socket, not `node:http`: a server that answers
 * and closes mid-body makes the next write fail, and the http client may report that failure
 * before the answer it had already received.
 */
export function streamUntilAnswered(
  url: string,
  options: { total: number; headers?: Record<string, string>; from?: string; method?: string },
): Promise<StreamedBodyResult> {
  const target = new URL(url)
  const headers = { ...options.headers }
  const chunked = !Object.keys(headers).some((name) => name.toLowerCase() === 'content-length')
  if (chunked) headers['transfer-encoding'] = 'chunked'
  const head = [
    `${options.method ?? 'POST'} ${target.pathname}${target.search} HTTP/1.1`,
    `host: ${target.host}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n')
  const chunk = Buffer.alloc(64 * 1024, 'a')
  const frame = chunked
    ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
    : chunk
  return new Promise((resolve) => {
    let written = 0
    let received = ''
    let status: number | undefined
    const socket = connect({
      host: target.hostname,
      port: Number(target.port),
      ...(options.from ? { localAddress: options.from } : {}),
    })
    const finish = () => {
      socket.destroy()
      resolve({ status: status ?? 'closed', written })
    }
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1')
      const line = /^HTTP\/1\.[01] (\d{3})/.exec(received)
      if (line && status === undefined) {
        status = Number(line[1])
        finish()
      }
    })
    socket.on('error', finish)
    socket.on('close', finish)
    const pump = () => {
      while (status === undefined && written < options.total && !socket.destroyed) {
        written += chunk.byteLength
        if (!socket.write(frame)) {
          socket.once('drain', pump)
          return
        }
      }
      if (status === undefined && written >= options.total) socket.write(chunked ? '0\r\n\r\n' : '')
    }
    socket.write(`${head}\r\n\r\n`)
    pump()
  })
}

/** A browser's cookie store for one site, enough for the session and CSRF cookies. */
export class Cookies {
  readonly #values = new Map<string, string>()

  take(response: LoopbackResponse): this {
    for (const pair of response.cookies) {
      const eq = pair.indexOf('=')
      if (eq < 0) continue
      const value = pair.slice(eq + 1)
      if (value === '') this.#values.delete(pair.slice(0, eq))
      else this.#values.set(pair.slice(0, eq), value)
    }
    return this
  }

  header(): string {
    return [...this.#values].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}
