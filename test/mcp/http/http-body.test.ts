import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMcpServer, mcpHttpHandler } from '../../../src/mcp/index.ts'

const LIMIT = 2048

/** A `ping` whose body is `size` bytes long (padded in `params._meta`). */
function pingOfSize(size: number): string {
  const empty = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'ping',
    params: { _meta: { pad: '' } },
  })
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'ping',
    params: { _meta: { pad: 'x'.repeat(size - empty.length) } },
  })
}

describe('the request body limit of the MCP endpoint', () => {
  let server: ReturnType<typeof serve>
  let url: string

  beforeAll(async () => {
    const app = new Hono()
    app.post(
      '/mcp',
      mcpHttpHandler({
        caller: () => ({}),
        maxRequestBodySize: LIMIT,
        createServer: () => createMcpServer(),
      }),
    )
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  })

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  }

  /** Sends the body in chunks, without a Content-Length (Transfer-Encoding: chunked). */
  function chunked(body: string): RequestInit {
    const bytes = new TextEncoder().encode(body)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 500) controller.enqueue(bytes.slice(at, at + 500))
        controller.close()
      },
    })
    return { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit
  }

  it('answers a body at the limit, with or without Content-Length', async () => {
    const body = pingOfSize(LIMIT)
    expect(body.length).toBe(LIMIT)
    for (const init of [{ method: 'POST', headers, body }, chunked(body)]) {
      const response = await fetch(url, init)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
    }
  })

  it('answers 413 to a body over the limit, with or without Content-Length', async () => {
    const body = pingOfSize(LIMIT + 1)
    for (const init of [{ method: 'POST', headers, body }, chunked(body)]) {
      const response = await fetch(url, init)
      expect(response.status).toBe(413)
      expect(await response.json()).toMatchObject({ error: { message: 'Request body too large' } })
    }
  })
})
