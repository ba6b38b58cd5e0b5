import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { FILTER_OPERATORS } from '../../src/api/query/index.ts'
import { type QueryApp, startQueryApp } from '../api/query/support.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { fuzzParameters, fuzzTimeout, nastyString } from './support.ts'

const RUNS = 200

const FIELDS = [
  'id',
  'title',
  'body',
  'published',
  'token_count',
  'author_id',
  'created_at',
  'updated_at',
]

/** Percent-encodes every UTF-8 byte outside the unreserved set (lone surrogates become U+FFFD). */
function pct(value: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const field = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIELDS) },
  { weight: 1, arbitrary: fc.constantFrom('password_hash', 'author', '__proto__', 'id]', '') },
  { weight: 1, arbitrary: nastyString },
)
const value = fc.oneof(
  fc.constantFrom(
    '1',
    '0',
    '-1',
    'true',
    'false',
    '2026-01-03',
    '2026-01-03T10:00:00+02',
    '1,2,3',
    'a,b',
    'Kiln',
    '%',
    '_',
    '\\',
    "'",
    '1e999',
    '9223372036854775808',
    '',
  ),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  nastyString,
)
const filter = fc
  .tuple(field, fc.option(fc.oneof(fc.constantFrom(...FILTER_OPERATORS), nastyString)), value)
  .map(([name, op, v]) => [`filter[${name}]${op === null ? '' : `[${op}]`}`, v] as const)
const sortList = fc
  .array(fc.tuple(fc.boolean(), field), { maxLength: 5 })
  .map((keys) => keys.map(([desc, name]) => `${desc ? '-' : ''}${name}`).join(','))
const param = fc.oneof(
  { weight: 5, arbitrary: filter },
  { weight: 2, arbitrary: sortList.map((v) => ['sort', v] as const) },
  {
    weight: 1,
    arbitrary: fc.array(field, { maxLength: 4 }).map((v) => ['fields', v.join(',')] as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.constantFrom('author', 'author.posts', 'author,author', ''), nastyString)
      .map((v) => ['include', v] as const),
  },
  { weight: 1, arbitrary: value.map((v) => ['search', v] as const) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.constant(''), nastyString, fc.base64String())
      .map((v) => ['cursor', v] as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.constantFrom('exact', 'estimated', 'none'), nastyString)
      .map((v) => ['count', v] as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer({ min: -2, max: 50 }).map(String), nastyString)
      .map((v) => ['page', v] as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer({ min: -2, max: 500 }).map(String), nastyString)
      .map((v) => ['per_page', v] as const),
  },
)

describeEachDatabase('fuzz: list query grammar', (backend) => {
  let q: QueryApp
  let before: string

  const snapshot = async () => {
    const response = await q.get('/posts?per_page=100&sort=id')
    const users = await q.get('/users?per_page=100&sort=id')
    return JSON.stringify([await response.json(), await users.json()])
  }

  beforeAll(async () => {
    q = await startQueryApp(backend)
    await q.seed(40)
    before = await snapshot()
  })
  afterAll(async () => {
    await q?.close()
  })

  it(
    'any combination of list parameters answers 200 or 422, never a 5xx, and changes nothing',
    async () => {
      const answered = { ok: 0, rejected: 0 }
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/posts', '/users'),
          fc.array(param, { maxLength: 8 }),
          async (path, params) => {
            const query = params.map(([key, v]) => `${pct(key)}=${pct(v)}`).join('&')
            const response = await q.get(`${path}?${query}`)
            const text = await response.text()
            expect(
              [200, 422],
              `${path}?${query} → ${response.status} ${text.slice(0, 300)}`,
            ).toContain(response.status)
            answered[response.status === 200 ? 'ok' : 'rejected']++
            const body = JSON.parse(text) as { data?: unknown[]; errors?: object }
            if (response.status === 200) expect(body.data!.length).toBeLessThanOrEqual(100)
            else expect(Object.keys(body.errors ?? {}).length).toBeGreaterThan(0)
          },
        ),
        fuzzParameters(RUNS),
      )
      expect(await snapshot()).toBe(before)
      // The grammar is exercised on both sides: some requests reach SQL, some are refused.
      expect(answered.ok).toBeGreaterThan(0)
      expect(answered.rejected).toBeGreaterThan(0)
    },
    fuzzTimeout(RUNS),
  )

  it(
    'a cursor edited anywhere is refused with 422',
    async () => {
      const first = (await (
        await q.get('/posts?sort=-created_at,title&per_page=3&cursor=')
      ).json()) as {
        meta: { next_cursor: string }
      }
      const cursor = first.meta.next_cursor
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: cursor.length - 1 }),
          fc.string({ minLength: 1, maxLength: 1 }),
          async (at, char) => {
            fc.pre(cursor[at] !== char)
            const edited = cursor.slice(0, at) + char + cursor.slice(at + 1)
            const response = await q.get(
              `/posts?sort=-created_at,title&per_page=3&cursor=${pct(edited)}`,
            )
            expect(response.status).toBe(422)
          },
        ),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS),
  )
})
