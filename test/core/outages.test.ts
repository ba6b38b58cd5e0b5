import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { createLogger, errorHandler, outageOf, requestLog } from '../../src/core/index.ts'
import { waitFor } from '../support/processes.ts'

/** A logger at info whose JSON lines the test reads. */
function capture() {
  const lines: Array<Record<string, unknown>> = []
  const logger = createLogger({
    level: 'info',
    format: 'json',
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  })
  return { logger, lines }
}

/** What drizzle throws when pg gave up waiting for a statement's answer. */
function queryTimeout(): Error {
  return new Error('Failed query: select 1\nparams: ', { cause: new Error('Query read timeout') })
}

describe('outages: a line when a dependency goes down, one when it is back', () => {
  it('names the dependency of what the drivers throw, and nothing else', () => {
    expect(outageOf(queryTimeout())).toBe('database')
    expect(outageOf(new Error('timeout exceeded when trying to connect'))).toBe('database')
    expect(outageOf(new Error('Command timed out'))).toBe('redis')
    expect(outageOf(Object.assign(new Error('terminating'), { code: '57P01' }))).toBe('database')
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6432'), {
      code: 'ECONNREFUSED',
      address: '127.0.0.1',
      port: 6432,
    })
    expect(outageOf(refused)).toBe('127.0.0.1:6432')
    expect(outageOf(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined()
    expect(outageOf(new Error('boom'))).toBeUndefined()
  })

  it('answers 503 with Retry-After, logs the outage once with its count, never a stack per request', async () => {
    const { logger, lines } = capture()
    let databaseAnswers = false
    const app = new Hono()
    app.onError(errorHandler({ logger }))
    app.use('*', requestLog({ logger }))
    app.get('/posts', () => {
      throw queryTimeout()
    })
    // A check to probe with, as healthRoutes registers its own.
    const { healthRoutes } = await import('../../src/core/index.ts')
    app.route(
      '/',
      healthRoutes({
        checks: {
          database: async () => {
            if (!databaseAnswers) throw new Error('Query read timeout')
          },
        },
        logger,
      }),
    )

    for (let i = 0; i < 20; i++) {
      const response = await app.request('/posts')
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('5')
      expect(await response.json()).toEqual({
        code: 'dependency_unavailable',
        error: 'Service Unavailable: the database did not answer; try again shortly',
      })
    }
    expect((await app.request('/health')).status).toBe(503)
    expect(lines.map((line) => line.msg)).toEqual([
      'database is down (Query read timeout): requests that need it answer 503 until it is back',
    ])
    expect(JSON.stringify(lines)).not.toMatch(/stack/)

    databaseAnswers = true
    await waitFor(() => lines.length === 2, 'the line saying the database is back')
    expect(lines[1]).toMatchObject({ dependency: 'database', failedRequests: 20, level: 40 })
    expect(lines[1]?.msg).toMatch(
      /^database is back after \d+\.\d s; 20 requests failed meanwhile$/,
    )
  })

  it('logs any other failure as before: a 500 with its error', async () => {
    const { logger, lines } = capture()
    const app = new Hono()
    app.onError(errorHandler({ logger }))
    app.get('/boom', () => {
      throw new Error('boom')
    })
    const response = await app.request('/boom')
    expect(response.status).toBe(500)
    expect(lines[0]?.msg).toBe('Unhandled error')
  })
})
