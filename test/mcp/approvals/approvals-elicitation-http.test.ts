import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../../examples/demo/src/app.ts'
import { hashPassword } from '../../../examples/demo/src/auth.ts'
import { createDemoContext, type DemoContext } from '../../../examples/demo/src/context.ts'
import { demoDataTools } from '../../../examples/demo/src/features/data-tools.ts'
import { posts, users } from '../../../examples/demo/src/schema.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { createAuditLog } from '../../../src/db/index.ts'
import { createPostgresTestDatabase } from '../../support/databases.ts'
import { demoAccessToken } from '../../support/demo-oauth.ts'
import { postgresUrl, redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { call } from '../support/client.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'
const OTHER_EMAIL = 'someone-else@example.com'
const OTHER_PASSWORD = 'another horse battery'

type Answer =
  | { action: 'accept'; content?: { approve: boolean } }
  | { action: 'decline' }
  | { action: 'cancel' }
/** An answer forged by someone else: a form filled in, which no approval takes anyway. */
const APPROVE: Answer = { action: 'accept', content: { approve: true } }

/**
 * A 2025-11-25 client sent to the approval page through a URL-mode elicitation over the demo's
 * stateless /mcp, with two instances of the demo behind one address sharing PostgreSQL and
 * Redis: the tool call runs on one instance, the person decides on the page of the other, and
 * the client's answer (a POST of its own) lands on the other too, which routes it to the
 * waiting call through Redis.
 */
describe.skipIf(!postgresUrl || !redisUrl)('elicitation over stateless HTTP, two instances', () => {
  let database: { url: string; drop(): Promise<void> }
  let redis: TestRedis
  const contexts: DemoContext[] = []
  let calls: Hono
  let answers: Hono
  let server: ReturnType<typeof serve>
  let origin: string
  let token: string
  /** Another OAuth client of the same author. */
  let otherClientToken: string
  let otherUserToken: string
  let authorId: number
  /** What each instance was sent: calls go to the first, answers to the second. */
  const seen = { calls: 0, answers: 0 }

  beforeAll(async () => {
    ;[database, redis] = await Promise.all([createPostgresTestDatabase(), createTestRedis()])
    let ready = false
    server = serve({
      fetch: async (request) => {
        if (!ready) return new Response(null, { status: 503 })
        // The load balancer: a JSON-RPC response (an answer to the server) goes to the second
        // instance, everything else to the first.
        if (request.method === 'POST' && new URL(request.url).pathname === '/mcp') {
          const body = (await request.clone().json()) as Record<string, unknown>
          if (!('method' in body) && ('result' in body || 'error' in body)) {
            seen.answers++
            return answers.fetch(request)
          }
          seen.calls++
        }
        return calls.fetch(request)
      },
      port: 0,
      hostname: '127.0.0.1',
    })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const env = {
      APP_URL: origin,
      MCP_TOKEN_SECRET: 'demo-elicitation-http-secret-0123456789-ab',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
      REDIS_URL: redisUrl!,
      REDIS_PREFIX: redis.prefix,
    }
    for (let i = 0; i < 2; i++) {
      contexts.push(
        await createDemoContext({ databaseUrl: database.url, logger: silentLogger(), env }),
      )
    }
    expect(contexts.map((ctx) => ctx.shared.kind)).toEqual(['redis', 'redis'])
    calls = await createDemoApp(contexts[0]!)
    answers = await createDemoApp(contexts[1]!)
    ready = true
    const db = contexts[0]!.database.db
    const [author] = await db.select({ id: users.id }).from(users).where(eq(users.email, EMAIL))
    authorId = author!.id
    await db.insert(users).values({
      email: OTHER_EMAIL,
      name: 'Someone else',
      passwordHash: await hashPassword(OTHER_PASSWORD),
    })
    token = await demoAccessToken(calls, origin, EMAIL, PASSWORD)
    otherClientToken = await demoAccessToken(calls, origin, EMAIL, PASSWORD)
    otherUserToken = await demoAccessToken(calls, origin, OTHER_EMAIL, OTHER_PASSWORD)
  }, 120_000)

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => resolve())
    })
    for (const ctx of contexts) await ctx.close()
    await redis?.cleanup()
    await database?.drop()
  })

  const asked: string[] = []

  /**
   * A 2025-11-25 client that declares URL-mode elicitation; `answer` decides what the client
   * says (and may act meanwhile, given the id of the server's request and the page's URL).
   */
  async function connect(answer: (requestId: string | number, url: string) => Promise<Answer>) {
    const client = new Client(
      { name: 'elicitation-http-test', version: '1.0.0' },
      {
        versionNegotiation: { mode: 'legacy' },
        capabilities: { elicitation: { url: {} } },
      },
    )
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const params = request.params as { message?: string; url?: string }
      asked.push(String(params.message))
      return (await answer(ctx.mcpReq.id, String(params.url))) as never
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    expect(client.getProtocolEra()).toBe('legacy')
    return client
  }

  /** POSTs an answer to the server's request `id` as the holder of `bearer`. */
  async function postAnswer(bearer: string, id: string | number, result: Answer) {
    return await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, result }),
    })
  }

  /** The author approves on the page of the instance that did not take the call. */
  async function personApproves(url: string): Promise<Answer> {
    const id = new URL(url).pathname.split('/').pop()!
    expect(
      await demoDataTools(contexts[1]!).approvals.decide(id, String(authorId), 'approved'),
    ).toBe(true)
    return { action: 'accept' }
  }

  async function newPost(title: string): Promise<number> {
    const [post] = await contexts[0]!.database.db
      .insert(posts)
      .values({ title, body: 'b', authorId })
      .returning()
    return post!.id
  }
  async function exists(id: number): Promise<boolean> {
    const rows = await contexts[0]!.database.db.select().from(posts).where(eq(posts.id, id))
    return rows.length === 1
  }
  const outcomesOf = (ids: number[]) => async () =>
    (await createAuditLog(contexts[0]!.database).list({ tool: 'crud_delete', limit: 1000 }))
      .filter((entry) => ids.includes(Number(entry.recordIds[0])))
      .reverse()
      .map((entry) => [entry.recordIds[0], entry.outcome])

  it('approved: the call waits on one instance, the answer lands on the other, the post is deleted once', async () => {
    const client = await connect(async (_, url) => personApproves(url))
    try {
      const id = await newPost('Approved across instances')
      asked.length = 0
      const before = { ...seen }
      const outcome = await call(client, 'crud_delete', { model: 'posts', id })
      expect(outcome).toMatchObject({ isError: false, json: { message: 'Deleted', id } })
      expect(asked).toEqual([
        `Delete posts record ${id}: review and approve it on the approval page.`,
      ])
      expect(seen.answers - before.answers).toBe(1)
      expect(await exists(id)).toBe(false)
      await expect.poll(outcomesOf([id]), { timeout: 10_000 }).toEqual([
        [id, 'awaiting_approval'],
        [id, 'approved'],
        [id, 'ok'],
      ])
    } finally {
      await client.close()
    }
  }, 60_000)

  it('declined to open the page: a tool error, and nothing changes', async () => {
    const client = await connect(async () => ({ action: 'decline' }))
    try {
      const id = await newPost('Declined across instances')
      const outcome = await call(client, 'crud_delete', { model: 'posts', id })
      expect(outcome.isError).toBe(true)
      expect(outcome.text).toBe(
        `The user did not open the approval page: Delete posts record ${id}. Nothing was changed.`,
      )
      expect(await exists(id)).toBe(true)
      await expect.poll(outcomesOf([id]), { timeout: 10_000 }).toEqual([
        [id, 'awaiting_approval'],
        [id, 'cancelled'],
      ])
    } finally {
      await client.close()
    }
  }, 60_000)

  it("an answer from another user's token, or another client's, is refused; the answer counts once", async () => {
    let requestId: string | number | undefined
    const refusals: number[] = []
    const client = await connect(async (id) => {
      requestId = id
      // Someone else tries to approve the deletion first: refused, and not used up.
      refusals.push((await postAnswer(otherUserToken, id, APPROVE)).status)
      refusals.push((await postAnswer(otherClientToken, id, APPROVE)).status)
      return { action: 'decline' }
    })
    try {
      const id = await newPost('Not theirs to approve')
      const outcome = await call(client, 'crud_delete', { model: 'posts', id })
      expect(refusals).toEqual([403, 403])
      expect(outcome.isError).toBe(true)
      expect(outcome.text).toMatch(/^The user did not open the approval page/)
      expect(await exists(id)).toBe(true)
      // The request ids are not the SDK's per-server numbering, and an answer counts once.
      expect(typeof requestId).toBe('string')
      const replay = await postAnswer(token, requestId!, APPROVE)
      expect(replay.status).toBe(404)
      expect(await exists(id)).toBe(true)
      // An answer to a request never sent is refused too.
      expect((await postAnswer(token, 0, APPROVE)).status).toBe(404)
    } finally {
      await client.close()
    }
  }, 60_000)

  it('concurrent calls get distinct request ids, and each answer reaches its own call', async () => {
    const ids: Array<string | number> = []
    const client = await connect(async (requestId, url) => {
      ids.push(requestId)
      return personApproves(url)
    })
    try {
      const [a, b, c] = [await newPost('one'), await newPost('two'), await newPost('three')]
      const outcomes = await Promise.all(
        [a, b, c].map((id) => call(client, 'crud_delete', { model: 'posts', id })),
      )
      expect(outcomes.map((outcome) => outcome.json)).toEqual(
        [a, b, c].map((id) => ({ message: 'Deleted', id })),
      )
      expect(new Set(ids).size).toBe(3)
      for (const id of [a, b, c]) expect(await exists(id)).toBe(false)
    } finally {
      await client.close()
    }
  }, 60_000)

  it('a client that hangs up ends the wait: a late answer finds nothing, nothing changes', async () => {
    let requestId: string | number | undefined
    let asking!: () => void
    const asked = new Promise<void>((resolve) => {
      asking = resolve
    })
    const client = await connect(async (id) => {
      requestId = id
      asking()
      return await new Promise<Answer>(() => {})
    })
    const id = await newPost('Abandoned')
    const called = client.callTool({ name: 'crud_delete', arguments: { model: 'posts', id } })
    called.catch(() => {})
    await asked
    // The client goes away while the user has not answered: its stream closes.
    await client.close()
    await expect(called).rejects.toThrow()
    // While the call waits, another user's answer is refused (403); once the wait ended there
    // is nothing to answer (404), for anyone.
    await expect
      .poll(async () => (await postAnswer(otherUserToken, requestId!, APPROVE)).status, {
        timeout: 10_000,
      })
      .toBe(404)
    expect((await postAnswer(token, requestId!, APPROVE)).status).toBe(404)
    expect(await exists(id)).toBe(true)
  }, 60_000)
})
