import { afterAll, describe, expect, it } from 'vitest'
import { type KeyValueStore, RedisKeyValueStore } from '../../src/core/index.ts'
import { createOAuthGrants } from '../../src/oauth/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'
import {
  approve,
  CHALLENGE,
  createHarness,
  form,
  type Harness,
  registerClient,
  VERIFIER,
} from './support.ts'

const REDIRECT = 'http://127.0.0.1:9999/callback'
const TRIES = 20

type Backend = { name: string; available: boolean; harness(): Promise<Harness> }

const redisHandles: TestRedis[] = []
afterAll(async () => {
  for (const redis of redisHandles) await redis.cleanup()
})

const backends: Backend[] = [
  { name: 'memory', available: true, harness: async () => createHarness({ clock: null }) },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    async harness() {
      const redis = await createTestRedis()
      redisHandles.push(redis)
      const store: KeyValueStore = new RedisKeyValueStore(redis.connections.connect(), {
        prefix: `${redis.prefix}:`,
      })
      return createHarness({ store, clock: null })
    },
  },
]

async function newCode(harness: Harness, clientId: string, user = 'alice') {
  const cookie = harness.sessions.login(user)
  const location = await approve(harness, cookie, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  })
  return location.searchParams.get('code') ?? ''
}

function exchange(harness: Harness, clientId: string, code: string) {
  return harness.request(
    '/token',
    form({
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: clientId,
    }),
  )
}

function refresh(harness: Harness, clientId: string, token: string) {
  return harness.request(
    '/token',
    form({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
  )
}

function mcp(harness: Harness, token: string) {
  return harness.request('/mcp', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
}

async function tokensFrom(responses: Response[]) {
  const issued: Array<{ access_token: string; refresh_token: string }> = []
  for (const res of responses) if (res.status === 200) issued.push(await res.json())
  return issued
}

/** How many issued tokens still work: each access token at /mcp, each refresh token at /token. */
async function survivors(
  harness: Harness,
  clientId: string,
  issued: Array<{ access_token: string; refresh_token: string }>,
) {
  let alive = 0
  for (const tokens of issued) {
    if ((await mcp(harness, tokens.access_token)).status === 200) alive++
    if ((await refresh(harness, clientId, tokens.refresh_token)).status === 200) alive++
  }
  return alive
}

describe.each(backends)('family revocation on $name', (backend) => {
  it.skipIf(!backend.available)(
    `no token survives a concurrent code replay (${TRIES} tries)`,
    async () => {
      const harness = await backend.harness()
      const { client_id: clientId } = await registerClient(harness)
      let alive = 0
      let issuedTotal = 0
      for (let i = 0; i < TRIES; i++) {
        const code = await newCode(harness, clientId)
        const issued = await tokensFrom(
          await Promise.all([1, 2, 3].map(() => exchange(harness, clientId, code))),
        )
        issuedTotal += issued.length
        alive += await survivors(harness, clientId, issued)
      }
      expect(issuedTotal).toBeGreaterThan(0)
      expect(alive).toBe(0)
    },
  )

  it.skipIf(!backend.available)(
    `no token survives a concurrent reuse of a refresh token (${TRIES} tries)`,
    async () => {
      const harness = await backend.harness()
      const { client_id: clientId } = await registerClient(harness)
      let alive = 0
      for (let i = 0; i < TRIES; i++) {
        const first = (await (
          await exchange(harness, clientId, await newCode(harness, clientId))
        ).json()) as { access_token: string; refresh_token: string }
        const issued = await tokensFrom(
          await Promise.all([1, 2, 3].map(() => refresh(harness, clientId, first.refresh_token))),
        )
        alive += await survivors(harness, clientId, [first, ...issued])
      }
      expect(alive).toBe(0)
    },
  )

  it.skipIf(!backend.available)(
    'revokeAllForUser ends tokens, refresh tokens and approvals not yet exchanged',
    async () => {
      const harness = await backend.harness()
      const grants = createOAuthGrants({ store: harness.store })
      const { client_id: clientId } = await registerClient(harness)
      const first = (await (
        await exchange(harness, clientId, await newCode(harness, clientId))
      ).json()) as { access_token: string; refresh_token: string }
      const pending = await newCode(harness, clientId)
      const bobs = (await (
        await exchange(harness, clientId, await newCode(harness, clientId, 'bob'))
      ).json()) as { access_token: string }
      expect((await grants.listForUser('alice')).map((app) => app.clientId)).toEqual([clientId])

      expect(await grants.revokeAllForUser('alice')).toBe(1)
      expect((await mcp(harness, first.access_token)).status).toBe(401)
      expect((await refresh(harness, clientId, first.refresh_token)).status).toBe(400)
      const late = await exchange(harness, clientId, pending)
      expect(late.status).toBe(400)
      expect(await grants.listForUser('alice')).toEqual([])
      // Another user's grant is untouched; a new approval after the cut-off works.
      expect((await mcp(harness, bobs.access_token)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 2))
      const again = await exchange(harness, clientId, await newCode(harness, clientId))
      expect(again.status).toBe(200)
    },
  )
})

describe('RFC 7009 revocation endpoint', () => {
  async function grant(harness: Harness) {
    const { client_id: clientId } = await registerClient(harness)
    const tokens = (await (
      await exchange(harness, clientId, await newCode(harness, clientId))
    ).json()) as { access_token: string; refresh_token: string }
    return { clientId, ...tokens }
  }

  it('revoking a refresh token ends the grant, access token included', async () => {
    const harness = createHarness()
    const { clientId, access_token, refresh_token } = await grant(harness)
    const res = await harness.request(
      '/revoke',
      form({ token: refresh_token, token_type_hint: 'refresh_token', client_id: clientId }),
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect((await mcp(harness, access_token)).status).toBe(401)
    expect((await refresh(harness, clientId, refresh_token)).status).toBe(400)
  })

  it('revoking an access token ends the grant', async () => {
    const harness = createHarness()
    const { clientId, access_token, refresh_token } = await grant(harness)
    const res = await harness.request('/revoke', form({ token: access_token, client_id: clientId }))
    expect(res.status).toBe(200)
    expect((await mcp(harness, access_token)).status).toBe(401)
    expect((await refresh(harness, clientId, refresh_token)).status).toBe(400)
  })

  it('answers 200 for an unknown token and refuses another client', async () => {
    const harness = createHarness()
    const { access_token } = await grant(harness)
    const other = await registerClient(harness)
    expect(
      (await harness.request('/revoke', form({ token: 'nope', client_id: other.client_id })))
        .status,
    ).toBe(200)
    const refused = await harness.request(
      '/revoke',
      form({ token: access_token, client_id: other.client_id }),
    )
    expect(refused.status).toBe(400)
    expect((await mcp(harness, access_token)).status).toBe(200)
  })

  it('needs a token and a client', async () => {
    const harness = createHarness()
    expect((await harness.request('/revoke', form({ client_id: 'x' }))).status).toBe(400)
    expect((await harness.request('/revoke', form({ token: 'x' }))).status).toBe(400)
  })

  it('is advertised in the metadata', async () => {
    const harness = createHarness()
    const metadata = (await (
      await harness.request('/.well-known/oauth-authorization-server')
    ).json()) as Record<string, unknown>
    expect(metadata.revocation_endpoint).toBe('http://127.0.0.1:3000/revoke')
  })
})
