import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { demoJobHandlers } from '../../examples/demo/src/jobs.ts'
import type { QueueWorker } from '../../src/core/index.ts'
import { type DemoUnderTest, startDemo } from '../demo/support.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl, redisUrl } from '../support/env.ts'
import { startDemoProcess, waitFor } from '../support/processes.ts'
import { TcpProxy } from '../support/tcp-proxy.ts'
import { inboundText, messageRows, messagingEnv, mintKey, signedWebhook } from './support.ts'

/** A dependency going away mid-flight: clear 5xx answers, nothing lost, recovery on its own. */
describe.skipIf(!postgresUrl || !redisUrl)('faults: dependencies going away', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  }, 60_000)

  async function testDatabase() {
    const database = await createPostgresTestDatabase()
    const pool = new pg.Pool({ connectionString: database.url, max: 2 })
    pool.on('error', () => {})
    cleanups.push(
      () => database.drop(),
      () => pool.end(),
    )
    return { ...database, pool }
  }

  it('answers 500 `Queue error: …` while Redis is unreachable, then processes the retry once', async () => {
    const { url, pool } = await testDatabase()
    const redis = await TcpProxy.forUrl(redisUrl ?? '').start()
    cleanups.push(() => redis.close())
    const demo: DemoUnderTest = await startDemo({
      databaseUrl: url,
      env: {
        ...messagingEnv,
        REDIS_URL: redis.rewrite(redisUrl ?? ''),
        REDIS_PREFIX: `kiln-faults-${randomBytes(4).toString('hex')}`,
      },
    })
    cleanups.push(() => demo.close())
    const worker: QueueWorker = demo.ctx.shared.queue.work(demoJobHandlers(demo.ctx))
    cleanups.push(() => worker.close())

    const wamid = `wamid.fault-${randomBytes(6).toString('hex')}`
    const body = inboundText(wamid, 'sent during an outage')
    redis.block()
    const failed = await demo.app.request('/messaging/webhook', signedWebhook(body))
    expect(failed.status).toBe(500)
    expect(await failed.text()).toMatch(/^Queue error: /)

    redis.unblock()
    // The provider retries a non-200 answer; the first retry after Redis is back is queued.
    await waitFor(async () => {
      const retry = await demo.app.request('/messaging/webhook', signedWebhook(body))
      return retry.status === 200
    }, 'a retry to be accepted')
    await waitFor(async () => (await messageRows(pool, wamid)) === 1, 'the message to be stored')
    const again = await demo.app.request('/messaging/webhook', signedWebhook(body))
    expect(again.status).toBe(200)
    await demo.ctx.shared.queue.drain()
    expect(await messageRows(pool, wamid)).toBe(1)
  }, 120_000)

  it('answers 503 `{error}` with Retry-After, without a stack, while Postgres is unreachable, and recovers by itself', async () => {
    const { url, pool } = await testDatabase()
    const postgres = await TcpProxy.forUrl(url).start()
    cleanups.push(() => postgres.close())
    const demo = await startDemo({ databaseUrl: postgres.rewrite(url) })
    cleanups.push(() => demo.close())
    const key = await mintKey(pool)
    const get = () =>
      demo.app.request('/api/v1/posts', { headers: { authorization: `Bearer ${key}` } })
    expect((await get()).status).toBe(200)

    postgres.block()
    const response = await get()
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
    const text = await response.text()
    expect(Object.keys(JSON.parse(text))).toEqual(['error', 'code'])
    expect(JSON.parse(text).error).toMatch(
      /^Service Unavailable: .+ did not answer; try again shortly$/,
    )
    expect(text).not.toMatch(/\bat .+:\d+:\d+/)
    // Readiness names what is down.
    const health = await demo.app.request('/health')
    expect(health.status).toBe(503)
    expect(await health.json()).toEqual({
      error: 'Service Unavailable: database is down',
      code: 'dependency_unavailable',
      dependencies: { database: 'down' },
      // The demo's open event streams, beside its dependencies.
      streams: 0,
    })

    postgres.unblock()
    await waitFor(async () => (await get()).status === 200, 'the API to recover')
    expect((await demo.app.request('/health')).status).toBe(200)
  }, 120_000)

  it('keeps the process alive while both PostgreSQL and Redis are down', async () => {
    const { url } = await testDatabase()
    const postgres = await TcpProxy.forUrl(url).start()
    const redis = await TcpProxy.forUrl(redisUrl ?? '').start()
    cleanups.push(
      () => postgres.close(),
      () => redis.close(),
    )
    const demo = await startDemoProcess({
      ...messagingEnv,
      DATABASE_URL: postgres.rewrite(url),
      REDIS_URL: redis.rewrite(redisUrl ?? ''),
      REDIS_PREFIX: `kiln-faults-${randomBytes(4).toString('hex')}`,
    })
    cleanups.push(() => demo.stop())

    postgres.block()
    redis.block()
    const body = inboundText(`wamid.down-${randomBytes(4).toString('hex')}`, 'nobody home')
    for (let i = 0; i < 5; i++) {
      const responses = await Promise.all([
        fetch(`${demo.url}/health`),
        fetch(`${demo.url}/api/v1/posts`, {
          headers: { authorization: `Bearer kl_test_${'x'.repeat(43)}` },
        }),
        fetch(`${demo.url}/messaging/webhook`, signedWebhook(body)),
        fetch(`${demo.url}/login`),
      ])
      for (const response of responses) expect(response.status).toBeLessThan(600)
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    expect(demo.child.exitCode).toBeNull()

    postgres.unblock()
    redis.unblock()
    await waitFor(async () => (await fetch(`${demo.url}/health`)).ok, 'the demo to recover')
    // The provider retries until it gets a 200; Redis reconnects within a few seconds.
    await waitFor(
      async () =>
        (await fetch(`${demo.url}/messaging/webhook`, signedWebhook(body))).status === 200,
      'the webhook to be accepted again',
    )
    expect(demo.child.exitCode).toBeNull()
  }, 180_000)
})
