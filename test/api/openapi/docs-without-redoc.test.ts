import { Hono } from 'hono'
import { expect, it, vi } from 'vitest'
import { apiDocs } from '../../../src/api/docs/api-docs.ts'

// An app that did not install the optional redoc package.
vi.mock('node:module', async (original) => {
  const actual = await original<typeof import('node:module')>()
  return {
    ...actual,
    createRequire: (from: string | URL) => {
      const require = actual.createRequire(from)
      const resolve = (id: string) => {
        if (id.startsWith('redoc/')) {
          throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' })
        }
        return require.resolve(id)
      }
      return Object.assign((id: string) => require(id), require, { resolve })
    },
  }
})

it('GET /api/docs without redoc says what to install, in the page itself', async () => {
  const app = new Hono()
  app.get('/api/v1/things', (c) => c.json([]))
  app.route('/', apiDocs({ app, title: 'T' }))
  const response = await app.request('/api/docs')
  const html = await response.text()
  expect(html).toContain(
    '<p>The API docs page needs the redoc package, which is not installed: npm install redoc.',
  )
  expect(html).toContain('<a href="/api/openapi.json">')
  expect(html).not.toContain('<script')
  expect((await app.request('/api/openapi.json')).status).toBe(200)
})
