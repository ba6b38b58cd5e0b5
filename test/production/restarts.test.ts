import { createHmac, randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar } from '../demo/support.ts'
import { inboundText, mintKey } from '../faults/support.ts'
import { hiddenField } from '../oauth/support.ts'
import { type RunningProcess, spawnKiln, startDemoProcess, waitFor } from '../support/processes.ts'
import {
  type OwnPostgres,
  type OwnRedis,
  serversAvailable,
  startOwnPostgres,
  startOwnRedis,
} from './servers.ts'

/** A request that has not answered after this long is a hang: the test fails on it. */
const HANG_MS = 30_000
/** The most requests one load run sends, whatever happens: the loop is bounded. */
const MAX_REQUESTS = 4_000
const CONCURRENCY = 8

interface Outcome {
  route: 'show' | 'list' | 'webhook'
  status: number
  body: string
  contentType: string
  wamid?: string
}

/**
 * The demo as it runs in production (NODE_ENV=production, PostgreSQL, Redis and a
 * `kilnjs queue:work` process), on a PostgreSQL server and a Redis this test owns, restarted
 * one after the other while requests keep coming.
 */
describe.skipIf(!serversAvailable)('restarts under load: nothing lost', () => {
  const APP_SECRET = `restart-app-secret-${randomBytes(8).toString('hex')}`
  const DEMO_PASSWORD = 'restart-demo-password'
  let postgres: OwnPostgres
  let redis: OwnRedis
  let pool: pg.Pool
  let env: Record<string, string>
  let demo: RunningProcess & { url: string }
  let worker: RunningProcess
  let apiKey: string
  let session: CookieJar
  /** A distinct client address per request: the per-IP `api` limit stays out of the way. */
  let nextIp = 0
  const ip = () => {
    nextIp++
    return `10.${(nextIp >> 16) & 255}.${(nextIp >> 8) & 255}.${nextIp & 255}`
  }

  beforeAll(async () => {
    ;[postgres, redis] = await Promise.all([startOwnPostgres(), startOwnRedis()])
    pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
    pool.on('error', () => {})
    env = {
      NODE_ENV: 'production',
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      REDIS_PREFIX: `kiln-restarts-${randomBytes(4).toString('hex')}`,
      MCP_TOKEN_SECRET: randomBytes(32).toString('hex'),
      STORAGE_URL_SECRET: randomBytes(32).toString('hex'),
      DEMO_PASSWORD,
      TRUST_PROXY: 'true',
      MSG_APP_SECRET: APP_SECRET,
      MSG_ACCESS_TOKEN: `access-${randomBytes(12).toString('hex')}`,
      MSG_PHONE_NUMBER_ID: '100000000000001',
      MSG_VERIFY_TOKEN: `verify-${randomBytes(8).toString('hex')}`,
      MSG_GRAPH_API_URL: 'http://127.0.0.1:9',
    }
    demo = await startDemoProcess(env)
    worker = spawnKiln(['queue:work'], { env: { ...env, LOG_LEVEL: 'info' } })
    await waitFor(() => {
      if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${worker.output()}`)
      return worker.output().includes('worker started')
    }, 'the worker')
    apiKey = await mintKey(pool)
    await pool.query(
      `insert into posts (title, body, author_id) select 'post ' || n, 'body', (select min(id) from users) from generate_series(1, 20) n`,
    )
    session = await signIn()
  }, 240_000)

  afterAll(async () => {
    await Promise.all([demo?.stop(), worker?.stop()])
    await pool?.end()
    await Promise.all([postgres?.stop(), redis?.stop()])
  }, 60_000)

  async function signIn(): Promise<CookieJar> {
    const jar = new CookieJar()
    const page = await fetch(`${demo.url}/login`, { headers: { 'x-forwarded-for': ip() } })
    jar.store(page)
    const response = await fetch(`${demo.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: jar.header(),
        'x-forwarded-for': ip(),
      },
      body: new URLSearchParams({
        email: 'demo@example.com',
        password: DEMO_PASSWORD,
        csrf_token: hiddenField(await page.text(), 'csrf_token'),
      }).toString(),
    })
    expect(response.status).toBe(303)
    jar.store(response)
    return jar
  }

  function webhook(wamid: string): RequestInit {
    const body = inboundText(wamid, `restart ${wamid}`)
    const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`
    return {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    }
  }

  /** One request of the mix: a show, a list page, or (one in five) a new webhook message. */
  async function send(n: number): Promise<Outcome> {
    const headers = { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': ip() }
    const route: Outcome['route'] = n % 5 === 0 ? 'webhook' : n % 2 === 0 ? 'show' : 'list'
    const wamid =
      route === 'webhook' ? `wamid.restart-${randomBytes(6).toString('hex')}` : undefined
    const url =
      route === 'webhook'
        ? `${demo.url}/messaging/webhook`
        : route === 'show'
          ? `${demo.url}/api/v1/posts/${(n % 20) + 1}`
          : `${demo.url}/api/v1/posts?page[size]=5`
    const init: RequestInit = wamid ? webhook(wamid) : { headers }
    // A request that never answers fails the test here: the abort is the hang guard.
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS) })
    return {
      route,
      status: response.status,
      body: await response.text(),
      contentType: response.headers.get('content-type') ?? '',
      wamid,
    }
  }

  /**
   * Drives the demo with CONCURRENCY requests at a time (`outage` sees their outcomes as they
   * come) until `outage` has settled and
   * `after` more requests have been answered, never more than MAX_REQUESTS in all.
   */
  async function underLoad(
    outage: (outcomes: Outcome[]) => Promise<void>,
    after = 200,
  ): Promise<Outcome[]> {
    const outcomes: Outcome[] = []
    let settled = false
    let answeredAfter = 0
    let sent = 0
    const loop = async () => {
      while (sent < MAX_REQUESTS && (!settled || answeredAfter < after)) {
        const outcome = await send(sent++)
        outcomes.push(outcome)
        if (settled) answeredAfter++
      }
    }
    const loops = Array.from({ length: CONCURRENCY }, loop)
    // Some load before the outage, so it begins mid-flight.
    await waitFor(() => outcomes.length >= 50, 'load before the outage')
    await outage(outcomes)
    settled = true
    await Promise.all(loops)
    return outcomes
  }

  /** Every answer was a success, or the documented failure: 500/503 with an `{error}` body, no stack. */
  function expectCleanFailures(outcomes: Outcome[]): void {
    for (const outcome of outcomes) {
      if (outcome.status === 200) continue
      expect(outcome.body).not.toMatch(/\n\s+at /)
      if (outcome.route === 'webhook') {
        // The provider retries anything but 200; messaging.md documents this plain-text 500.
        expect(outcome.status).toBe(500)
        continue
      }
      expect([500, 503]).toContain(outcome.status)
      expect(outcome.contentType).toMatch(/application\/json/)
      expect(JSON.parse(outcome.body)).toEqual({
        error: expect.any(String),
        code: expect.any(String),
      })
    }
  }

  async function rowsFor(wamid: string): Promise<number> {
    const { rows } = await pool.query('select count(*)::int as n from messages where wamid = $1', [
      wamid,
    ])
    return (rows[0] as { n: number }).n
  }

  /**
   * Every message acknowledged with 200 is stored once; one answered otherwise is sent again,
   * as the provider would, until acknowledged, then stored once too.
   */
  async function expectEachMessageOnce(outcomes: Outcome[]): Promise<void> {
    const messages = outcomes.filter((outcome) => outcome.route === 'webhook')
    for (const message of messages) {
      const wamid = message.wamid ?? ''
      if (message.status !== 200) {
        await waitFor(async () => {
          const retry = await fetch(`${demo.url}/messaging/webhook`, {
            ...webhook(wamid),
            signal: AbortSignal.timeout(HANG_MS),
          })
          await retry.arrayBuffer()
          return retry.status === 200
        }, `the retry of ${wamid} to be acknowledged`)
      }
    }
    await pool.query('select 1').catch(() => {})
    await waitFor(
      async () => {
        for (const message of messages) if ((await rowsFor(message.wamid ?? '')) !== 1) return false
        return true
      },
      'every message to be stored',
      120_000,
    )
    for (const message of messages) expect(await rowsFor(message.wamid ?? '')).toBe(1)
  }

  /** After a restart every route answers again, with no one stepping in. */
  async function expectEveryRouteAnswers(): Promise<void> {
    await waitFor(async () => {
      const checks = await Promise.all([
        fetch(`${demo.url}/health`).then((r) => r.status),
        fetch(`${demo.url}/api/v1/posts/1`, {
          headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': ip() },
        }).then((r) => r.status),
        fetch(`${demo.url}/api/v1/posts`, {
          headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': ip() },
        }).then((r) => r.status),
      ]).catch(() => [0])
      return checks.every((status) => status === 200)
    }, 'every route to answer 200 again')
  }

  function expectAlive(): void {
    expect(demo.child.exitCode).toBeNull()
    expect(worker.child.exitCode).toBeNull()
  }

  /** Restarts a server under load; while it is down, the load goes on for 100 answers. */
  async function restartUnderLoad(server: OwnPostgres | OwnRedis): Promise<Outcome[]> {
    let down: Outcome[] = []
    const outcomes = await underLoad((sofar) =>
      server.restart(async () => {
        const from = sofar.length
        await waitFor(() => sofar.length >= from + 100, 'answers while it is down')
        down = sofar.slice(from)
      }),
    )
    const seen = new Map<string, number>()
    for (const { route, status } of outcomes) {
      seen.set(`${route} ${status}`, (seen.get(`${route} ${status}`) ?? 0) + 1)
    }
    console.log(`answers around the restart (${down.length} while down)`, Object.fromEntries(seen))
    expectAlive()
    expectCleanFailures(outcomes)
    // The outage was seen: requests answered during it, some of them with the failure.
    expect(down.some((outcome) => outcome.status !== 200)).toBe(true)
    await expectEveryRouteAnswers()
    await expectEachMessageOnce(outcomes)
    expectAlive()
    return outcomes
  }

  it('a PostgreSQL restart: clean 500s during it, then every route and every message', async () => {
    await restartUnderLoad(postgres)
  }, 300_000)

  it('a Redis restart: clean 500s during it, then every route and every message', async () => {
    await restartUnderLoad(redis)
  }, 300_000)

  it('keeps the session signed in before both restarts, and the rate limits whole', async () => {
    const home = await fetch(`${demo.url}/`, {
      headers: { cookie: session.header(), 'x-forwarded-for': ip() },
    })
    expect(home.status).toBe(200)
    expect(await home.text()).toMatch(/Signed in \(user \d+\)/)

    // One client address: 60 requests a minute pass, the 61st is refused.
    const client = '203.0.113.61'
    const statuses: number[] = []
    for (let i = 0; i < 61; i++) {
      const response = await fetch(`${demo.url}/api/v1/posts`, {
        headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': client },
      })
      statuses.push(response.status)
      await response.arrayBuffer()
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(60)
    expect(statuses.at(-1)).toBe(429)
    expectAlive()
  })
})
