import { createHmac, randomBytes } from 'node:crypto'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '../../src/api/index.ts'
import { apiKeysPg } from '../../src/db/index.ts'
import { CookieJar } from '../demo/support.ts'
import { CHALLENGE, form, hiddenField, VERIFIER } from '../oauth/support.ts'
import { consentChoices } from '../support/consent-choices.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl, redisUrl } from '../support/env.ts'
import {
  freePort,
  type RunningProcess,
  spawnKiln,
  startDemoProcess,
  waitFor,
} from '../support/processes.ts'

/**
 * Two demo instances and one `kilnjs queue:work` process on one PostgreSQL and one Redis:
 * everything a user relies on when they outgrow one process.
 */
describe.skipIf(!postgresUrl || !redisUrl)('two instances and a worker', () => {
  const APP_SECRET = `app-secret-${randomBytes(12).toString('hex')}`
  const DEMO_PASSWORD = 'cluster-demo-password'
  let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>
  let pool: pg.Pool
  let env: Record<string, string>
  let a: RunningProcess & { url: string }
  let b: RunningProcess & { url: string }
  let worker: RunningProcess

  const startWorker = async () => {
    const started = spawnKiln(['queue:work'], { env: { ...env, LOG_LEVEL: 'info' } })
    await waitFor(() => {
      if (started.child.exitCode !== null) throw new Error(`worker exited:\n${started.output()}`)
      return started.output().includes('worker started')
    }, 'the worker')
    return started
  }

  beforeAll(async () => {
    database = await createPostgresTestDatabase()
    pool = new pg.Pool({ connectionString: database.url, max: 3 })
    pool.on('error', () => {})
    const portA = await freePort()
    const portB = await freePort()
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl ?? '',
      REDIS_PREFIX: `kiln-cluster-${randomBytes(4).toString('hex')}`,
      // Both instances stand behind one public URL, as behind a load balancer.
      APP_URL: `http://127.0.0.1:${portA}`,
      // This test also reaches B by its own address, as a load balancer's health check would.
      ALLOWED_HOSTS: `127.0.0.1:${portB}`,
      MCP_TOKEN_SECRET: randomBytes(32).toString('hex'),
      DEMO_PASSWORD,
      TRUST_PROXY: 'true',
      MSG_APP_SECRET: APP_SECRET,
      MSG_ACCESS_TOKEN: `access-${randomBytes(12).toString('hex')}`,
      MSG_PHONE_NUMBER_ID: '100000000000001',
      MSG_VERIFY_TOKEN: `verify-${randomBytes(8).toString('hex')}`,
      MSG_GRAPH_API_URL: 'http://127.0.0.1:9',
    }
    a = await startDemoProcess(env, { port: portA })
    b = await startDemoProcess(env, { port: portB })
    worker = await startWorker()
  }, 240_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), worker?.stop()])
    await pool?.end()
    await database?.drop()
  }, 60_000)

  /** A key minted straight into the shared database, as `kilnjs make:api-key --save` does. */
  async function mintKey(name: string): Promise<{ raw: string; id: number }> {
    const key = generateApiKey('test')
    const [row] = await drizzle(pool)
      .insert(apiKeysPg)
      .values({ name, prefix: key.prefix, hashedKey: key.hashedKey, scopes: '["*"]' })
      .returning({ id: apiKeysPg.id })
    return { raw: key.rawKey, id: row?.id ?? 0 }
  }

  it('keeps one `api` rate-limit budget across both instances: 61 requests → one 429', async () => {
    const { raw } = await mintKey('rate-limit')
    const ip = '203.0.113.61'
    const statuses: number[] = []
    for (let i = 0; i < 61; i++) {
      const base = i % 2 === 0 ? a.url : b.url
      const response = await fetch(`${base}/api/v1/posts`, {
        headers: { authorization: `Bearer ${raw}`, 'x-forwarded-for': ip },
      })
      statuses.push(response.status)
      await response.arrayBuffer()
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(1)
    expect(statuses.filter((s) => s === 200)).toHaveLength(60)
    expect(statuses.at(-1)).toBe(429)
  })

  it('refuses on one instance a key revoked through the other, on the next request', async () => {
    const { raw, id } = await mintKey('revoke-me')
    const headers = { authorization: `Bearer ${raw}`, 'x-forwarded-for': '203.0.113.7' }
    expect((await fetch(`${a.url}/api/v1/posts`, { headers })).status).toBe(200)
    expect((await fetch(`${b.url}/api/v1/posts`, { headers })).status).toBe(200)
    const revoke = spawnKiln(['api-key:revoke', String(id)], { env })
    expect(await revoke.exited).toBe(0)
    expect((await fetch(`${b.url}/api/v1/posts`, { headers })).status).toBe(401)
    expect((await fetch(`${a.url}/api/v1/posts`, { headers })).status).toBe(401)
  })

  /** Signs in through the login form of one instance; the session lives in Redis. */
  async function signIn(base: string): Promise<CookieJar> {
    const jar = new CookieJar()
    const page = await fetch(`${base}/login`)
    jar.store(page)
    const response = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
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

  async function register(base: string): Promise<string> {
    const response = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Cluster client',
        redirect_uris: ['http://127.0.0.1:9999/callback'],
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
      }),
    })
    expect(response.status).toBe(201)
    return ((await response.json()) as { client_id: string }).client_id
  }

  it('exchanges on B an authorization code issued by A', async () => {
    const clientId = await register(a.url)
    const jar = await signIn(a.url)
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9999/callback',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      state: 'cluster',
    })
    const consent = await fetch(`${a.url}/authorize?${query}`, {
      headers: { cookie: jar.header() },
    })
    expect(consent.status).toBe(200)
    const html = await consent.text()
    const decision = await fetch(`${a.url}/authorize`, {
      ...form({
        request_id: hiddenField(html, 'request_id'),
        csrf_token: hiddenField(html, 'csrf_token'),
        decision: 'approve',
        ...choicesOf(html),
      }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      redirect: 'manual',
    })
    expect(decision.status).toBe(303)
    const code = new URL(decision.headers.get('location') ?? '').searchParams.get('code') ?? ''
    const token = await fetch(`${b.url}/token`, {
      ...form({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        redirect_uri: 'http://127.0.0.1:9999/callback',
        client_id: clientId,
      }),
    })
    expect(token.status).toBe(200)
    expect(await token.json()).toMatchObject({ token_type: 'Bearer' })
  })

  it('completes a device flow begun on A, approved on B, polled on A', async () => {
    const clientId = await register(a.url)
    const started = await fetch(`${a.url}/device_authorization`, form({ client_id: clientId }))
    expect(started.status).toBe(200)
    const { device_code, user_code } = (await started.json()) as {
      device_code: string
      user_code: string
    }

    const jar = await signIn(b.url)
    const page = await fetch(`${b.url}/device?user_code=${encodeURIComponent(user_code)}`, {
      headers: { cookie: jar.header() },
    })
    expect(page.status).toBe(200)
    const entry = await page.text()
    // The code typed on the entry page opens the consent page, whose choices the approval sends.
    const consent = await fetch(`${b.url}/device`, {
      ...form({
        user_code: hiddenField(entry, 'user_code'),
        csrf_token: hiddenField(entry, 'csrf_token'),
      }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    })
    expect(consent.status).toBe(200)
    const html = await consent.text()
    const approve = await fetch(`${b.url}/device`, {
      ...form({
        user_code: hiddenField(html, 'user_code'),
        csrf_token: hiddenField(html, 'csrf_token'),
        decision: 'approve',
        ...choicesOf(html),
      }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    })
    expect(approve.status).toBe(200)

    const token = await fetch(`${a.url}/token`, {
      ...form({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code,
        client_id: clientId,
      }),
    })
    expect(token.status).toBe(200)
    expect(await token.json()).toMatchObject({ token_type: 'Bearer' })
  })

  function inbound(wamid: string, text: string): string {
    return JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '200000000000002',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: {
                  display_phone_number: '12025550100',
                  phone_number_id: '100000000000001',
                },
                contacts: [{ profile: { name: 'Ana' }, wa_id: '12025550143' }],
                messages: [
                  {
                    from: '12025550143',
                    id: wamid,
                    timestamp: '1763740800',
                    text: { body: text },
                    type: 'text',
                  },
                ],
              },
            },
          ],
        },
      ],
    })
  }

  function postWebhook(base: string, body: string): Promise<Response> {
    const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`
    return fetch(`${base}/messaging/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    })
  }

  async function rowsFor(wamid: string): Promise<number> {
    const { rows } = await pool.query('select count(*)::int as n from messages where wamid = $1', [
      wamid,
    ])
    return (rows[0] as { n: number }).n
  }

  it('queues once the same webhook message posted to A and B at the same moment', async () => {
    const wamid = `wamid.cluster-${randomBytes(6).toString('hex')}`
    const body = inbound(wamid, 'twice at once')
    const [ra, rb] = await Promise.all([postWebhook(a.url, body), postWebhook(b.url, body)])
    expect([ra.status, rb.status]).toEqual([200, 200])
    expect(await ra.json()).toEqual({ received: true })
    expect(await rb.json()).toEqual({ received: true })
    await waitFor(async () => (await rowsFor(wamid)) === 1, 'the worker to store the message')
    const { rows } = await pool.query(
      `select count(*)::int as n from messages where body = 'twice at once'`,
    )
    expect(rows[0]).toEqual({ n: 1 })
  })

  it('runs again, once, a job whose worker was killed in the middle of it', async () => {
    const wamid = `wamid.killed-${randomBytes(6).toString('hex')}`
    // Hold the messages table so the listener's insert blocks: the job is surely mid-flight.
    const blocker = await pool.connect()
    await blocker.query('begin')
    await blocker.query('lock table messages in share row exclusive mode')
    try {
      expect((await postWebhook(a.url, inbound(wamid, 'survives a crash'))).status).toBe(200)
      await waitFor(async () => {
        const { rows } = await pool.query(
          `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
           where c.relname = 'messages' and not l.granted`,
        )
        return (rows[0] as { n: number }).n > 0
      }, 'the job to block on the locked table')
      worker.child.kill('SIGKILL')
      await worker.exited
      // The dead worker's server backend would still finish its insert once the lock goes:
      // end it, as a crashed machine's connection would be ended, so nothing of that run lands.
      await pool.query(
        `select pg_terminate_backend(a.pid) from pg_stat_activity a
         join pg_locks l on l.pid = a.pid join pg_class c on c.oid = l.relation
         where c.relname = 'messages' and not l.granted`,
      )
    } finally {
      await blocker.query('rollback')
      blocker.release()
    }
    expect(await rowsFor(wamid)).toBe(0)
    worker = await startWorker()
    // BullMQ hands the stalled job to the new worker once the dead one's lock expires.
    await waitFor(async () => (await rowsFor(wamid)) === 1, 'the job to run again', 120_000)
    expect(await rowsFor(wamid)).toBe(1)
  }, 180_000)
})

/** The page's choices as `form` takes them: the marker and the ticked permissions. */
function choicesOf(html: string): Record<string, string[]> {
  const fields: Record<string, string[]> = {}
  for (const [name, value] of consentChoices(html)) fields[name] = [...(fields[name] ?? []), value]
  return fields
}
