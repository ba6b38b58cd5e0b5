import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import { createDemoContext, type DemoContext } from '../../examples/demo/src/context.ts'
import { silentLogger } from '../../src/core/index.ts'
import { waitFor } from '../support/processes.ts'
import { type OwnPostgres, serversAvailable, startOwnPostgres } from './servers.ts'

/**
 * The health endpoints while the database is frozen (issue #39): PostgreSQL stopped with SIGSTOP
 * keeps its connections open and answers nothing. /health used to hang for the whole outage.
 * Now readiness answers 503 naming the database within a second, liveness answers 200, and both
 * recover once the server runs again, without a restart. The server is this test's own.
 */
describe.skipIf(!serversAvailable)('health while PostgreSQL is frozen', () => {
  let postgres: OwnPostgres
  let ctx: DemoContext
  let app: Hono

  beforeAll(async () => {
    postgres = await startOwnPostgres()
    ctx = await createDemoContext({
      databaseUrl: postgres.url,
      logger: silentLogger(),
      env: { DEMO_PASSWORD: 'health freeze password' },
    })
    app = await createDemoApp(ctx)
  }, 120_000)

  afterAll(async () => {
    await postgres?.thaw()
    await ctx?.close()
    await postgres?.stop()
  })

  /** A request and how long it took; one that has not answered after 5 s counts as a hang. */
  async function timed(path: string) {
    const started = performance.now()
    const hang = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000))
    const response = await Promise.race([app.request(path), hang])
    const ms = performance.now() - started
    const body = response ? ((await response.json()) as Record<string, unknown>) : undefined
    return { status: response?.status ?? 'hung', body, ms, headers: response?.headers }
  }

  it('answers readiness 503 naming the database within a second, liveness 200, then recovers', async () => {
    const before = await timed('/health/ready')
    expect(before.status).toBe(200)
    expect(before.body).toEqual({ status: 'ok', dependencies: { database: 'up' }, streams: 0 })

    await postgres.freeze()
    try {
      for (const path of ['/health', '/health/ready', '/health']) {
        const frozen = await timed(path)
        expect(frozen.status, path).toBe(503)
        expect(frozen.ms, path).toBeLessThan(1_000)
        expect(frozen.body).toEqual({
          error: 'Service Unavailable: database is down',
          code: 'dependency_unavailable',
          dependencies: { database: 'down' },
          streams: 0,
        })
        expect(frozen.headers?.get('retry-after')).toBe('5')
      }
      const live = await timed('/health/live')
      expect(live.status).toBe(200)
      expect(live.ms).toBeLessThan(1_000)
    } finally {
      await postgres.thaw()
    }
    await waitFor(async () => (await timed('/health')).status === 200, 'readiness after the thaw')
  })
})
