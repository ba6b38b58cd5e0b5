import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

const FIELDS = [
  'title',
  'body',
  'published',
  'token_count',
  'author_id',
  'id',
  'created_at',
  'extra',
]

/** Values of every JSON kind, with edge cases databases dislike. */
const jsonValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\ud800', "'; DROP TABLE posts; --", 'x'.repeat(300)),
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER, 1.5, 1e300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
)

const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), jsonValue, { maxKeys: 6 }),
  jsonValue,
  fc.string().map((text) => ({ raw: text })),
)

const queryValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer().map(String),
  fc.constantFrom('0', '-1', '1.5', '1e3', '', '99999999999999999999', ' 1', '0x1', '%00'),
)

describeEachDatabase(
  'generated API properties',
  (backend) => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    let postId: number
    let snapshot: string
    let authorId: number

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect, { models: ['posts', 'users'] })
      api = await startGeneratedApi(scaffolded, backend)
      authorId = await api.createUser()
      const created = await api.request('POST', '/api/v1/posts', {
        title: 'Fixed',
        body: 'Unchanged',
        author_id: authorId,
      })
      postId = ((await created.json()) as { data: { id: number } }).data.id
      snapshot = await (await api.request('GET', `/api/v1/posts/${postId}`)).text()
    })
    afterAll(async () => {
      await api?.close()
      scaffolded?.cleanup()
    })

    const send = (method: string, path: string, value: unknown) => {
      if (value && typeof value === 'object' && 'raw' in value) {
        return api.request(method, path, String((value as { raw: string }).raw))
      }
      return api.request(method, path, JSON.stringify(value))
    }

    it('random bodies never produce a 5xx; a rejected update changes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(body, async (value) => {
          const update = await send('PUT', `/api/v1/posts/${postId}`, value)
          expect(update.status).toBeLessThan(500)
          if (update.status >= 400) {
            const now = await (await api.request('GET', `/api/v1/posts/${postId}`)).text()
            expect(now).toBe(snapshot)
          } else {
            snapshot = await (await api.request('GET', `/api/v1/posts/${postId}`)).text()
          }
          const before = await total(api)
          const create = await send('POST', '/api/v1/posts', value)
          expect(create.status).toBeLessThan(500)
          if (create.status >= 400) expect(await total(api)).toBe(before)
        }),
        { numRuns: 150 },
      )
    }, 120_000)

    it('random query strings and ids never produce a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(
          queryValue,
          queryValue,
          fc.string({ maxLength: 25 }),
          async (page, perPage, id) => {
            const query = new URLSearchParams({ page, per_page: perPage }).toString()
            const list = await api.request('GET', `/api/v1/posts?${query}`)
            expect(list.status).toBeLessThan(500)
            expect([200, 422]).toContain(list.status)
            const path = `/api/v1/posts/${encodeURIComponent(id)}`
            const show = await api.request('GET', path)
            expect(show.status).toBeLessThan(500)
            const destroy = await api.request('DELETE', `/api/v1/posts/${encodeURIComponent(id)}x`)
            expect(destroy.status).toBeLessThan(500)
          },
        ),
        { numRuns: 150 },
      )
      expect(await (await api.request('GET', `/api/v1/posts/${postId}`)).text()).toBe(snapshot)
    }, 120_000)
  },
  { only: ['sqlite', 'postgres'] },
)

async function total(api: RunningApi): Promise<number> {
  const response = await api.request('GET', '/api/v1/posts?per_page=1')
  return ((await response.json()) as { meta: { total: number } }).meta.total
}
