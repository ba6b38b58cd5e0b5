import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createMcpServer, type McpServer, mcpHttpHandler } from '../../../src/mcp/index.ts'
import { INITIALIZE } from '../support/client.ts'

/** An app's own tool: counts down, reporting progress and logging each step. */
function registerCountdown(server: McpServer): void {
  server.registerTool(
    'countdown',
    {
      description: 'Counts down from `from`',
      inputSchema: z.object({ from: z.int().min(1).max(5) }),
    },
    async ({ from }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken
      for (let step = 1; step <= from; step++) {
        await ctx.mcpReq.log('info', `step ${step}`)
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: from },
          })
        }
      }
      return { content: [{ type: 'text', text: `counted down from ${from}` }] }
    },
  )
}

describe("an app's own tools on the stateless HTTP endpoint", () => {
  let server: ReturnType<typeof serve>
  let base: string

  beforeAll(async () => {
    const app = new Hono()
    // `/plain`: no logging capability; `/logging`: declares it.
    for (const [path, logging] of [
      ['/plain', false],
      ['/logging', true],
    ] as const) {
      app.post(
        path,
        mcpHttpHandler({
          caller: () => ({}),
          createServer: () => createMcpServer({ register: [registerCountdown], logging }),
        }),
      )
    }
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  it('streams progress to a 2025 client that asks for it, and answers JSON otherwise', async () => {
    const client = new Client({ name: 'kiln-test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/plain`)))
    try {
      const progress: number[] = []
      const result = await client.callTool(
        { name: 'countdown', arguments: { from: 3 } },
        undefined,
        { onprogress: ({ progress: value }) => void progress.push(value) },
      )
      expect(result.content).toEqual([{ type: 'text', text: 'counted down from 3' }])
      expect(progress).toEqual([1, 2, 3])
      // Without the logging capability, the server has no log messages to send.
      const logs: unknown[] = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n))
      await client.callTool({ name: 'countdown', arguments: { from: 2 } })
      expect(logs).toEqual([])
    } finally {
      await client.close()
    }
    const plain = await fetch(`${base}/plain`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'countdown', arguments: { from: 1 } },
      }),
    })
    expect(plain.headers.get('content-type')).toContain('application/json')
  })

  it('declares logging and streams log messages to a 2025 client', async () => {
    const plain = await fetch(`${base}/plain`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
    })
    const plainInit = (await plain.json()) as { result: { capabilities: Record<string, unknown> } }
    expect(plainInit.result.capabilities.logging).toBeUndefined()

    const client = new Client({ name: 'kiln-test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/logging`)))
    try {
      expect(client.getServerCapabilities()?.logging).toEqual({})
      await client.setLoggingLevel('debug')
      const logs: string[] = []
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (n) => void logs.push(String(n.params.data)),
      )
      await client.callTool({ name: 'countdown', arguments: { from: 2 } })
      expect(logs).toEqual(['step 1', 'step 2'])
    } finally {
      await client.close()
    }
  })

  it('streams progress to a 2026-07-28 client', async () => {
    const client = new ClientV2(
      { name: 'kiln-v2', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    await client.connect(new StreamableHTTPClientTransportV2(new URL(`${base}/plain`)))
    try {
      expect(client.getProtocolEra()).toBe('modern')
      const progress: number[] = []
      await client.callTool(
        { name: 'countdown', arguments: { from: 3 } },
        { onprogress: ({ progress: value }) => void progress.push(value) },
      )
      expect(progress).toEqual([1, 2, 3])
    } finally {
      await client.close()
    }
  })
})
