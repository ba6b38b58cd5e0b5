import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createRateLimiters, type RateLimiters } from '../../../src/core/index.ts'
import { createMcpServer, type McpEndpointOptions, mcpEndpoint } from '../../../src/mcp/index.ts'
import { createBearerValidator } from '../../../src/oauth/index.ts'
import { hmacKey, signAccessToken } from '../../../src/oauth/protocol/access-token.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../../support/redis.ts'

const ORIGIN = 'http://127.0.0.1:3000'
const SECRET = 'rate-limit-test-secret-0123456789-abcdef'

/** An app whose one tool counts how often it ran. */
function appWith(rateLimit: McpEndpointOptions['rateLimit']) {
  const runs = { count: 0 }
  const app = new Hono()
  app.route(
    '/mcp',
    mcpEndpoint({
      validator: createBearerValidator({
        secret: SECRET,
        issuer: ORIGIN,
        resource: `${ORIGIN}/mcp`,
      }),
      resourceMetadataUrl: `${ORIGIN}/.well-known/oauth-protected-resource/mcp`,
      rateLimit,
      createServer: () =>
        createMcpServer({
          register: [
            (server) =>
              server.registerTool('count', { inputSchema: z.object({}) }, () => {
                runs.count += 1
                return { content: [{ type: 'text', text: String(runs.count) }] }
              }),
          ],
        }),
    }),
  )
  return { app, runs }
}

let sequence = 0
async function token(user: string, client: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  sequence += 1
  return signAccessToken(
    {
      iss: ORIGIN,
      aud: `${ORIGIN}/mcp`,
      sub: user,
      client_id: client,
      grant_id: `grant-${user}-${client}`,
      scope: 'mcp:read',
      iat: now,
      exp: now + 600,
      jti: `jti-${sequence}`,
    },
    hmacKey(SECRET),
  )
}

async function callTool(app: Hono, bearer: string): Promise<Response> {
  return await app.request(`${ORIGIN}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${bearer}`,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'count', arguments: {} },
    }),
  })
}

describe('/mcp rate limits', () => {
  it('answers 429 with Retry-After per user, before the tool runs', async () => {
    const { app, runs } = appWith({ perUser: { max: 3, windowMs: 60_000 } })
    const alice = await token('alice', 'client-a')
    for (let i = 0; i < 3; i++) {
      const res = await callTool(app, alice)
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-remaining')).toBe(String(2 - i))
    }
    const refused = await callTool(app, alice)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(await refused.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/^Too Many Requests/) },
      id: null,
    })
    expect(runs.count).toBe(3)
    // The same user through another client counts against the same limit; another user does not.
    expect((await callTool(app, await token('alice', 'client-b'))).status).toBe(429)
    expect((await callTool(app, await token('bob', 'client-a'))).status).toBe(200)
    expect(runs.count).toBe(4)
  })

  it('answers 429 per client, whatever the user', async () => {
    const { app, runs } = appWith({ perClient: { max: 2, windowMs: 60_000 } })
    expect((await callTool(app, await token('u1', 'busy'))).status).toBe(200)
    expect((await callTool(app, await token('u2', 'busy'))).status).toBe(200)
    expect((await callTool(app, await token('u3', 'busy'))).status).toBe(429)
    expect((await callTool(app, await token('u3', 'quiet'))).status).toBe(200)
    expect(runs.count).toBe(3)
  })

  it('refuses a limit that cannot work at start-up', () => {
    expect(() => appWith({ perUser: { max: 0, windowMs: 60_000 } })).toThrow(TypeError)
  })

  it('takes limits as { points, durationSeconds }, the vocabulary of the rate limiters', async () => {
    const { app } = appWith({ perClient: { points: 1, durationSeconds: 30 } })
    expect((await callTool(app, await token('u1', 'single'))).status).toBe(200)
    const refused = await callTool(app, await token('u2', 'single'))
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(30)
    expect(() => appWith({ perUser: { points: 2, durationSeconds: 0.5 } })).toThrow(TypeError)
  })
})

describeWithRedis('/mcp rate limits in Redis', () => {
  let redis: TestRedis
  beforeAll(async () => {
    redis = await createTestRedis()
  })
  afterAll(async () => {
    await redis?.cleanup()
  })

  it('counts two instances together', async () => {
    const limiters = async (): Promise<RateLimiters> => {
      const client = redis.connections.connect()
      await client.ping() // connected: counts go to Redis, not to the fallback in memory
      return createRateLimiters({ redis: client, prefix: redis.prefix })
    }
    const one = appWith({ rateLimiters: await limiters(), perUser: { max: 2, windowMs: 60_000 } })
    const two = appWith({ rateLimiters: await limiters(), perUser: { max: 2, windowMs: 60_000 } })
    const carol = await token('carol', 'client-a')
    expect((await callTool(one.app, carol)).status).toBe(200)
    expect((await callTool(two.app, carol)).status).toBe(200)
    expect((await callTool(one.app, carol)).status).toBe(429)
    expect((await callTool(two.app, carol)).status).toBe(429)
    expect(one.runs.count + two.runs.count).toBe(2)
  })
})
