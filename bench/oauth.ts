/**
 * `npm run bench -- oauth`: bearer validation in process beside a bare `jose.jwtVerify`, and the
 * token endpoint on loopback (authorization-code exchange, device-code poll) beside a trivial
 * Hono route served by the same server. Codes and device codes are single use, so pools of
 * them are made before each measured round, outside the timing.
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { jwtVerify } from 'jose'
import { ManualClock, MemoryKeyValueStore } from 'kilnjs/core'
import { createBearerValidator, type OAuthSession, oauthServer } from 'kilnjs/oauth'
import { signAccessToken } from '../src/oauth/protocol/access-token.ts'
import { s256Challenge } from '../src/oauth/protocol/pkce.ts'
import { MemoryClientStore } from '../src/oauth/store/client-store.ts'
import { type BenchOptions, type BenchResult, compare, measure } from './lib.ts'

const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const VERIFIER = 'bench-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz'
const REDIRECT = 'http://127.0.0.1:9/callback'
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'

export default async function run(options: BenchOptions): Promise<BenchResult[]> {
  const rounds = options.quick ? 2 : 6
  const durationMs = options.quick ? 300 : 1_000
  return [await bearerValidation(rounds, durationMs), ...(await tokenEndpoint(rounds, durationMs))]
}

async function bearerValidation(rounds: number, durationMs: number): Promise<BenchResult> {
  const issuer = 'http://127.0.0.1:3000'
  const resource = `${issuer}/mcp`
  const key = new TextEncoder().encode(SECRET)
  const now = Math.floor(Date.now() / 1000)
  const token = await signAccessToken(
    {
      sub: 'u1',
      tenant_id: 't1',
      client_id: 'c1',
      grant_id: 'bench-grant',
      scope: 'mcp',
      aud: resource,
      iss: issuer,
      iat: now,
      exp: now + 3600,
      jti: 'j1',
    },
    key,
  )
  const validate = createBearerValidator({ secret: SECRET, issuer, resource })
  const request = new Request(resource, { headers: { authorization: `Bearer ${token}` } })
  const result = await compare(
    () => validate(request),
    () => jwtVerify(token, key, { algorithms: ['HS256'], issuer, audience: resource }),
    { rounds, durationMs },
  )
  return {
    name: 'validateBearer (in process)',
    baseline: 'jose.jwtVerify',
    ...result,
    notes:
      'validateBearer adds header parsing, typ/claim checks and result shaping; without a revocation store',
  }
}

async function tokenEndpoint(rounds: number, durationMs: number): Promise<BenchResult[]> {
  // A frozen clock: pooled codes never expire and the first poll of a device code is never
  // too soon, whatever the round length.
  const clock = new ManualClock(Date.now())
  const store = new MemoryKeyValueStore({ clock })
  const session: OAuthSession = { userId: 'bench-user', tenantId: 't1', csrfToken: 'bench-csrf' }
  const app = new Hono()
  app.get('/trivial', (c) => c.json({ ok: true }))
  let issuer = ''
  const server = serve({ fetch: (request) => app.fetch(request), port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  app.route(
    '/',
    oauthServer({
      clients: new MemoryClientStore(),
      store,
      secret: SECRET,
      issuer,
      clock,
      session: async () => session,
      registrationLimit: { max: 1_000, windowMs: 60_000 },
    }),
  )
  const inProcess = (path: string, init?: RequestInit) =>
    app.fetch(new Request(`${issuer}${path}`, init))
  const formInit = (fields: Record<string, string>): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
  const registered = await inProcess('/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', DEVICE],
    }),
  })
  const clientId = ((await registered.json()) as { client_id: string }).client_id

  const authorize = `/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256Challenge(VERIFIER),
    code_challenge_method: 'S256',
  })}`
  const newCode = async () => {
    const html = await (await inProcess(authorize)).text()
    const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1] ?? ''
    const res = await inProcess(
      '/authorize',
      formInit({ request_id: requestId, csrf_token: 'bench-csrf', decision: 'approve' }),
    )
    return new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? ''
  }
  const newDeviceCode = async () => {
    const res = await inProcess('/device_authorization', formInit({ client_id: clientId }))
    return ((await res.json()) as { device_code: string }).device_code
  }
  const trivial = async () => {
    const res = await fetch(`${issuer}/trivial`)
    await res.arrayBuffer()
  }
  const post = async (fields: Record<string, string>, expected: number) => {
    const res = await fetch(`${issuer}/token`, formInit(fields))
    await res.arrayBuffer()
    if (res.status !== expected) throw new Error(`/token answered ${res.status}`)
  }
  const concurrency = 8
  const exchange = await alternate(
    rounds,
    durationMs,
    concurrency,
    newCode,
    (code) =>
      post(
        {
          grant_type: 'authorization_code',
          code,
          code_verifier: VERIFIER,
          redirect_uri: REDIRECT,
          client_id: clientId,
        },
        200,
      ),
    trivial,
  )
  const poll = await alternate(
    rounds,
    durationMs,
    concurrency,
    newDeviceCode,
    (deviceCode) => post({ grant_type: DEVICE, device_code: deviceCode, client_id: clientId }, 400),
    trivial,
  )
  ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const notes = `loopback, ${concurrency} concurrent keep-alive clients (fetch) in the same process as the server; memory store`
  return [
    {
      name: '/token code exchange (PKCE → JWT)',
      baseline: 'trivial Hono route, same server',
      ...exchange,
      notes,
    },
    {
      name: '/token device poll (authorization_pending)',
      baseline: 'trivial Hono route, same server',
      ...poll,
      notes,
    },
  ]
}

/**
 * Alternating rounds like `compare`, but each subject round consumes single-use items from a
 * pool that is filled before the round starts (the filling is not timed).
 */
async function alternate(
  rounds: number,
  durationMs: number,
  concurrency: number,
  make: () => Promise<string>,
  subject: (item: string) => Promise<void>,
  baseline: () => Promise<void>,
): Promise<{ ops: number; baselineOps: number; ratio: number }> {
  let pool: string[] = []
  let estimate = 2_000
  const fill = async () => {
    while (pool.length < estimate) pool.push(await make())
  }
  const take = () => {
    const item = pool.pop()
    if (item === undefined) throw new Error('pool ran dry; raise the estimate')
    return subject(item)
  }
  await fill()
  const warmUpMs = Math.min(300, durationMs)
  const warmUp = await measure(take, warmUpMs, concurrency)
  // A round takes about what the warm-up rate gives over its duration; keep twice that ready.
  estimate = Math.max(estimate, Math.ceil(((warmUp.count * durationMs) / warmUpMs) * 2))
  await measure(baseline, Math.min(300, durationMs), concurrency)
  let s = { count: 0, ms: 0 }
  let b = { count: 0, ms: 0 }
  for (let round = 0; round < rounds; round++) {
    await fill()
    const runSubject = async () => {
      const r = await measure(take, durationMs, concurrency)
      s = { count: s.count + r.count, ms: s.ms + r.ms }
      estimate = Math.max(estimate, Math.ceil(r.count * 2))
    }
    const runBaseline = async () => {
      const r = await measure(baseline, durationMs, concurrency)
      b = { count: b.count + r.count, ms: b.ms + r.ms }
    }
    if (round % 2 === 0) {
      await runSubject()
      await runBaseline()
    } else {
      await runBaseline()
      await runSubject()
    }
    pool = pool.slice(-estimate)
  }
  const ops = (s.count / s.ms) * 1000
  const baselineOps = (b.count / b.ms) * 1000
  return { ops, baselineOps, ratio: ops / baselineOps }
}
