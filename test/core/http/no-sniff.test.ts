import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiDocs } from '../../../src/api/index.ts'
import {
  errorHandler,
  NotFoundError,
  noSniff,
  plainResponses,
  silentLogger,
} from '../../../src/core/index.ts'
import { type DemoUnderTest, startDemo } from '../../demo/support.ts'

const nosniff = (response: Response) => response.headers.get('x-content-type-options')

describe('JSON answers carry X-Content-Type-Options: nosniff', () => {
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.use('/plain/*', plainResponses({ cacheControl: 'private' }))
  app.get('/plain/ok', (c) => c.json({ ok: true }))
  app.get('/plain/missing', () => {
    throw new NotFoundError()
  })
  app.get('/broken', () => {
    throw new Error('boom')
  })
  app.get('/missing', () => {
    throw new NotFoundError()
  })
  app.use('/own/*', noSniff())
  app.get('/own/json', (c) => c.json({ own: true }))
  app.get('/own/response', () => Response.json({ own: true }))

  it.each(['/plain/ok', '/plain/missing', '/broken', '/missing', '/own/json', '/own/response'])(
    '%s',
    async (path) => {
      const response = await app.request(path)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(nosniff(response)).toBe('nosniff')
    },
  )
})

describe('the docs routes on an app that mounts nothing else', () => {
  it.each(['/api/openapi.json', '/api/openapi-3.1.json'])('%s', async (path) => {
    const app = new Hono()
    app.get('/ping', (c) => c.json({ ok: true }))
    app.route('/', apiDocs({ app, title: 'Docs' }))
    const response = await app.request(path)
    expect(response.status).toBe(200)
    expect(nosniff(response)).toBe('nosniff')
    // The docs' header stays on their own answers.
    expect(nosniff(await app.request('/ping'))).toBeNull()
  })
})

describe('JSON answers of the demo: REST API, OAuth, MCP', () => {
  let demo: DemoUnderTest
  const APP = 'http://127.0.0.1:3000'

  beforeAll(async () => {
    demo = await startDemo({
      env: { APP_URL: APP, MCP_TOKEN_SECRET: 'nosniff-test-secret-0123456789-abcdefgh' },
    })
  })
  afterAll(async () => {
    await demo.close()
  })

  it.each([
    ['GET', '/api/v1/posts'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['POST', '/token'],
    ['POST', '/register'],
    ['POST', '/mcp'],
    // The docs' documents and the app's own routes: nosniff is the app's default.
    ['GET', '/api/openapi.json'],
    ['GET', '/api/openapi-3.1.json'],
    ['GET', '/health'],
    ['GET', '/no-such-page'],
  ])('%s %s', async (method, path) => {
    const response = await demo.app.request(`${APP}${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    })
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(nosniff(response)).toBe('nosniff')
  })
})
