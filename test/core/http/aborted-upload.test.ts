import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bodyLimit, createLogger, errorHandler } from '../../../src/core/index.ts'

/** Items as they come, and a promise for the next one. */
class Arrivals<T> {
  readonly items: T[] = []
  #waiting: ((item: T) => void)[] = []

  push(item: T): void {
    this.items.push(item)
    for (const done of this.#waiting.splice(0)) done(item)
  }

  next(): Promise<T> {
    return new Promise((done) => this.#waiting.push(done))
  }
}

function captureLogs() {
  const lines = new Arrivals<Record<string, unknown>>()
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const text of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(text))
      callback()
    },
  })
  return { logger: createLogger({ level: 'debug', destination }), lines }
}

describe('a client that aborts its upload', () => {
  const logs = captureLogs()
  const answered = new Arrivals<number>()
  const started = new Arrivals<true>()
  let server: ReturnType<typeof serve>
  let port: number

  beforeAll(async () => {
    const app = new Hono()
    app.onError(errorHandler({ logger: logs.logger }))
    app.use('/upload', async (_c, next) => {
      started.push(true)
      await next()
    })
    app.post('/upload', bodyLimit({ maxBytes: 1024 * 1024 }), async (c) => {
      const body = await c.req.arrayBuffer()
      return c.json({ bytes: body.byteLength })
    })
    const fetch = async (request: Request) => {
      const response = await app.fetch(request)
      answered.push(response.status)
      return response
    }
    server = serve({ fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    port = (server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  /** Sends the head and half of the body over a real socket, then closes it. */
  async function abortHalfway(head: string, half: string): Promise<void> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    const reading = started.next()
    socket.write(head + half)
    // The connection goes away once the app is reading the body.
    await reading
    socket.destroy()
  }

  it.each([
    ['with Content-Length', 'content-length: 1000\r\n', 'a'.repeat(500)],
    ['chunked', 'transfer-encoding: chunked\r\n', `1f4\r\n${'a'.repeat(500)}\r\n`],
  ])(
    '%s: is logged at debug without a stack, and not answered 500',
    async (_name, length, half) => {
      const before = logs.lines.items.length
      const status = answered.next()
      await abortHalfway(
        `POST /upload HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n${length}\r\n`,
        half,
      )
      expect(await status).toBe(400)
      const lines = logs.lines.items.slice(before)
      expect(lines).toEqual([
        expect.objectContaining({ level: 20, msg: 'client closed the request', path: '/upload' }),
      ])
      expect(JSON.stringify(lines)).not.toContain('stack')
    },
  )

  it('a whole upload is still read', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/upload`, {
      method: 'POST',
      body: 'x'.repeat(2000),
    })
    expect(await response.json()).toEqual({ bytes: 2000 })
  })
})
