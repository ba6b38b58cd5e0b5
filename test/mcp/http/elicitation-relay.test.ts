import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import {
  inputRequired,
  inputResponse,
  McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryKeyValueStore, MemoryPubSub } from '../../../src/core/index.ts'
import { seedClientCapabilities } from '../../../src/mcp/http/elicitation-relay.ts'
import { mcpHttpHandler } from '../../../src/mcp/index.ts'

const TIMEOUT_MS = 300

/**
 * The endpoint's relay of server→client requests in the 2025 era, on an app's own tool and
 * caller: a client that declared elicitation is asked on the call's stream, and a call whose
 * client does not answer in time ends as a cancelled elicitation.
 */
describe('server→client requests on the stateless 2025-era endpoint', () => {
  let server: ReturnType<typeof serve>
  let url: URL
  const store = new MemoryKeyValueStore()
  const answers: string[] = []

  beforeAll(async () => {
    const app = new Hono()
    app.post(
      '/mcp',
      mcpHttpHandler({
        // The app's own caller, without an access token: the declaration is the caller's.
        caller: (c) => ({ userId: c.req.header('x-user') ?? 'nobody' }),
        serverRequests: { store, pubsub: new MemoryPubSub(), timeoutMs: TIMEOUT_MS },
        createServer: () => {
          const mcp = new McpServer({ name: 'relay-test', version: '1.0.0' })
          mcp.registerTool('confirm', { description: 'Asks the user' }, (ctx: ServerContext) => {
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'sure')
            if (answer.kind === 'missing') {
              return inputRequired({
                inputRequests: {
                  sure: inputRequired.elicit({
                    message: 'Sure?',
                    requestedSchema: {
                      type: 'object',
                      properties: { yes: { type: 'boolean' } },
                    },
                  }),
                },
              })
            }
            const said = answer.kind === 'elicit' ? answer.action : answer.kind
            answers.push(said)
            return { content: [{ type: 'text', text: said }] }
          })
          return mcp
        },
      }),
    )
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`)
  })

  afterAll(async () => {
    await new Promise((resolve) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(resolve)
    })
  })

  async function connect(user: string, answer?: () => Promise<{ action: 'accept' | 'decline' }>) {
    const client = new Client(
      { name: 'relay-test', version: '1.0.0' },
      {
        versionNegotiation: { mode: 'legacy' },
        ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}),
      },
    )
    if (answer) client.setRequestHandler('elicitation/create', answer)
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-user': user } } }),
    )
    return client
  }
  const textOf = (result: unknown) =>
    ((result as { content: Array<{ text?: string }> }).content[0]?.text ?? '') as string

  it('asks a client that declared elicitation, and resumes the call with its answer', async () => {
    const client = await connect('ada', async () => ({ action: 'accept' }))
    try {
      expect(textOf(await client.callTool({ name: 'confirm', arguments: {} }))).toBe('accept')
    } finally {
      await client.close()
    }
  })

  it('asks nothing of a client that did not declare it', async () => {
    const client = await connect('bob')
    try {
      const result = await client.callTool({ name: 'confirm', arguments: {} })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(/did not declare the required capability/)
    } finally {
      await client.close()
    }
  })

  it('ends a wait without an answer after the timeout, as a cancelled elicitation', async () => {
    const client = await connect('cyd', () => new Promise(() => {}))
    try {
      const started = Date.now()
      const result = await client.callTool({ name: 'confirm', arguments: {} })
      expect(textOf(result)).toBe('cancel')
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(answers.at(-1)).toBe('cancel')
    } finally {
      await client.close()
    }
  })
})

/**
 * The one place kiln reaches into the SDK: a per-request server is given the capabilities the
 * client declared in its `initialize` through the server's `_clientCapabilities`, as the SDK
 * (2.x) offers no public setter. This fails when the SDK stops reading that field, so the
 * workaround is replaced rather than silently ignored.
 */
describe('seedClientCapabilities', () => {
  it("is what the SDK server reads as the client's declaration", () => {
    const mcp = new McpServer({ name: 'seeded', version: '1.0.0' })
    expect(mcp.server.getClientCapabilities()).toBeUndefined()
    const declared = { elicitation: { url: {} } }
    seedClientCapabilities(mcp, declared)
    expect(mcp.server.getClientCapabilities()).toEqual(declared)
  })
})
