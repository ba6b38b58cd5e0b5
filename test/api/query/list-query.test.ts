import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/databases.ts'
import { execSql } from '../support.ts'
import { type QueryApp, startQueryApp } from './support.ts'

interface Envelope {
  data: Array<Record<string, unknown>>
  meta: Record<string, unknown>
  links: Record<string, string | null | undefined>
}

describeEachDatabase('list query engine', (backend) => {
  let q: QueryApp
  let userIds: number[]
  const TOTAL = 60

  beforeAll(async () => {
    q = await startQueryApp(backend)
    ;({ userIds } = await q.seed(TOTAL))
  })
  afterAll(async () => {
    await q?.close()
  })

  const list = async (query: string) => {
    const response = await q.get(`/posts?${query}`)
    const body = (await response.json()) as Envelope & { errors?: Record<string, string[]> }
    return { status: response.status, body, response }
  }
  const ids = (body: Envelope) => body.data.map((record) => record.id as number)

  describe('filter', () => {
    it('eq on a boolean, shorthand and explicit, with total reflecting the filter', async () => {
      const { status, body } = await list('filter[published]=true&per_page=100')
      expect(status).toBe(200)
      expect(body.data.every((r) => r.published === true)).toBe(true)
      expect(body.meta.total).toBe(TOTAL / 2)
      const explicit = await list('filter[published][eq]=false&per_page=10')
      expect(explicit.body.meta.total).toBe(TOTAL / 2)
      expect(explicit.body.data.every((r) => r.published === false)).toBe(true)
    })

    it('text operators match literally: % and _ are not wildcards; i-variants ignore case', async () => {
      const percent = await list('filter[title][contains]=100%25 post_&per_page=100')
      expect(percent.body.meta.total).toBe(TOTAL / 2)
      const sensitive = await list('filter[title][contains]=kiln')
      expect(sensitive.body.meta.total).toBe(0)
      const insensitive = await list('filter[title][icontains]=kiln&per_page=100')
      expect(insensitive.body.meta.total).toBe(TOTAL / 2)
      const starts = await list('filter[title][starts_with]=Kiln&per_page=100')
      expect(starts.body.meta.total).toBe(TOTAL / 2)
      const istarts = await list('filter[title][istarts_with]=OTHER')
      expect(istarts.body.meta.total).toBe(TOTAL / 2)
      const ends = await list('filter[title][ends_with]=post 0')
      expect(ends.body.data.map((r) => r.title)).toEqual(['Kiln post 0'])
      const iends = await list('filter[body][iends_with]=CLAY')
      expect(iends.body.meta.total).toBe(TOTAL / 3)
      const wildcard = await list('filter[title][contains]=_')
      expect(wildcard.body.meta.total).toBe(TOTAL / 2)
    })

    it('comparison, in, not_in, between, ne and null operators', async () => {
      const all = (await list('per_page=100')).body.data
      const byId = (pred: (r: Record<string, unknown>) => boolean) =>
        all.filter(pred).map((r) => r.id as number)
      const [a, b, c] = [all[3]!.id, all[5]!.id, all[7]!.id] as number[]
      expect(ids((await list(`filter[id][in]=${a},${b},${c}`)).body)).toEqual([a, b, c])
      expect((await list(`filter[id][not_in]=${a},${b}&per_page=100`)).body.meta.total).toBe(
        TOTAL - 2,
      )
      expect(ids((await list(`filter[id][between]=${a},${c}`)).body)).toEqual(
        byId((r) => (r.id as number) >= a! && (r.id as number) <= c!),
      )
      expect((await list('filter[token_count][gte]=3&per_page=100')).body.meta.total).toBe(
        byId((r) => (r.token_count as number) >= 3).length,
      )
      expect((await list('filter[token_count][lt]=1&per_page=100')).body.meta.total).toBe(
        byId((r) => (r.token_count as number) < 1).length,
      )
      expect((await list('filter[token_count][ne]=0&per_page=100')).body.meta.total).toBe(
        byId((r) => r.token_count !== 0).length,
      )
      const since = await list(
        'filter[created_at][gte]=2026-01-10&filter[created_at][lt]=2026-01-12T00:00:00Z',
      )
      expect(since.body.meta.total).toBe(4)
      expect((await list(`filter[author_id]=${userIds[0]}&per_page=100`)).body.meta.total).toBe(
        TOTAL / 3,
      )
      expect((await list('filter[author_id][null]=false')).body.meta.total).toBe(TOTAL)
      expect((await list('filter[author_id][null]=true')).body.meta.total).toBe(0)
    })

    it('rejects bad parameters with a 422 naming each of them, and never a 5xx', async () => {
      const outOfRange = backend.name === 'sqlite' ? '99999999999999999999' : '99999999999'
      const cases: Array<[string, string]> = [
        ['filter[id]=abc', 'filter[id]'],
        // A Postgres integer is 32-bit; a SQLite one 64-bit, read as a safe integer.
        [`filter[token_count][gt]=${outOfRange}`, 'filter[token_count][gt]'],
        ['filter[published]=yes', 'filter[published]'],
        ['filter[created_at][gte]=2026-02-30', 'filter[created_at][gte]'],
        ['filter[created_at][gte]=tomorrow', 'filter[created_at][gte]'],
        ['filter[title][like]=x', 'filter[title][like]'],
        ['filter[nope]=1', 'filter[nope]'],
        ['filter[published][contains]=t', 'filter[published][contains]'],
        ['filter[published][gt]=true', 'filter[published][gt]'],
        ['filter[id][between]=1', 'filter[id][between]'],
        ['filter[id][null]=maybe', 'filter[id][null]'],
        ['filter[a][b][c]=1', 'filter[a][b][c]'],
        ['filter=1', 'filter'],
        ['sort=password', 'sort'],
        ['sort=title,title', 'sort'],
        ['fields=id,nope', 'fields'],
        ['include=comments', 'include'],
        ['include=author.posts', 'include'],
        ['count=maybe', 'count'],
        ['cursor=abc', 'cursor'],
        ['page=0', 'page'],
        ['per_page=x', 'per_page'],
        ['filter[title]=a%00b', 'filter[title]'],
        ['search=x&search=y', 'search'],
      ]
      for (const [query, param] of cases) {
        const { status, body } = await list(query)
        expect(status, query).toBe(422)
        expect(Object.keys(body.errors ?? {}), query).toContain(param)
      }
      const both = await list('filter[id]=x&sort=nope')
      expect(Object.keys(both.body.errors ?? {}).sort()).toEqual(['filter[id]', 'sort'])
    })

    it('never filters on a sensitive field', async () => {
      const response = await q.get('/users?filter[password_hash][starts_with]=x')
      expect(response.status).toBe(422)
      const body = (await response.json()) as { errors: Record<string, string[]> }
      expect(body.errors['filter[password_hash][starts_with]']![0]).toMatch(
        /not a filterable field/,
      )
      expect(body.errors['filter[password_hash][starts_with]']![0]).not.toMatch(/password_hash,/)
    })

    it('caps filters, in-lists, sort keys and includes', async () => {
      const many = Array.from({ length: 21 }, (_, i) => `filter[id][ne]=${i}`)
      // Distinct keys are needed: spread them over operators and fields.
      const distinct = many.map(
        (_, i) =>
          `filter[${['id', 'token_count', 'author_id'][i % 3]}][${['ne', 'gte', 'lte', 'gt', 'lt', 'eq', 'null'][i % 7]}]=${i % 7 === 6 ? 'false' : 1}`,
      )
      const filters = await list([...new Set(distinct)].join('&'))
      expect(filters.status).toBe(422)
      expect(filters.body.errors?.filter?.[0]).toMatch(/at most 20/)
      const inList = await list(
        `filter[id][in]=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`,
      )
      expect(inList.body.errors?.['filter[id][in]']?.[0]).toMatch(/at most 100/)
      const sorts = await list('sort=title,token_count,author_id,created_at')
      expect(sorts.body.errors?.sort?.[0]).toMatch(/at most 3/)
    })
  })

  describe('sort', () => {
    it('orders by the allowed fields with the primary key as tie-breaker', async () => {
      const { body } = await list('sort=-created_at&per_page=100')
      const keys = body.data.map((r) => [r.created_at as string, r.id as number] as const)
      const expected = [...keys].sort((x, y) =>
        x[0] === y[0] ? y[1] - x[1] : x[0] < y[0] ? 1 : -1,
      )
      expect(keys).toEqual(expected)
      const mixed = (await list('sort=published,-token_count&per_page=100')).body.data
      const sorted = [...mixed].sort(
        (x, y) =>
          Number(x.published) - Number(y.published) ||
          (y.token_count as number) - (x.token_count as number) ||
          (y.id as number) - (x.id as number),
      )
      expect(mixed.map((r) => r.id)).toEqual(sorted.map((r) => r.id))
    })
  })

  describe('fields', () => {
    it('selects only the asked columns in SQL', async () => {
      q.resetQueries()
      const { body } = await list('fields=id,title&per_page=2')
      expect(body.data[0]).toEqual({ id: expect.any(Number), title: expect.any(String) })
      const page = q.queries.find((text) => /from "posts"/i.test(text))!
      expect(page).not.toMatch(/"body"/)
      expect(page).toMatch(/"title"/)
    })
  })

  describe('include', () => {
    it('attaches each post’s author with one query per page, never the password hash', async () => {
      q.resetQueries()
      const { body } = await list('include=author&per_page=20')
      expect(q.queries.filter((text) => /from "users"/i.test(text))).toHaveLength(1)
      expect(q.queries.filter((text) => /^select/i.test(text))).toHaveLength(2)
      for (const record of body.data) {
        const author = record.author as Record<string, unknown>
        expect(author.id).toBe(record.author_id)
        expect(author).not.toHaveProperty('password_hash')
        expect(author).not.toHaveProperty('remember_token')
      }
    })

    it('attaches at most `limit` posts per user, in one query', async () => {
      q.resetQueries()
      const response = await q.get('/users?include=posts')
      const body = (await response.json()) as Envelope
      expect(q.queries.filter((text) => /from "posts"|"kiln_ranked"/i.test(text))).toHaveLength(1)
      for (const user of body.data) {
        const posts = user.posts as Array<Record<string, unknown>>
        expect(posts.length).toBe(2)
        expect(posts.every((post) => post.author_id === user.id)).toBe(true)
        expect(posts[0]!.id as number).toBeLessThan(posts[1]!.id as number)
      }
    })
  })

  describe('search', () => {
    it('finds records whose text columns hold the term', async () => {
      const { body } = await list('search=POTTERY&per_page=100')
      expect(body.meta.total).toBe(TOTAL / 3)
      expect((await list('search=%25')).body.meta.total).toBe(TOTAL / 2)
      expect((await q.get('/users?search=x')).status).toBe(422)
    })
  })

  describe('cursor pages', () => {
    it.each(['', 'sort=-created_at', 'sort=title,-token_count', 'sort=-published,created_at'])(
      'walk forwards and back through every record once (%s)',
      async (sort) => {
        const offsetOrder = ids((await list(`${sort}&per_page=100`)).body)
        const seen: number[] = []
        let link: string | null = `/posts?${sort}&per_page=7&cursor=`
        const backLinks: string[] = []
        while (link) {
          const page = (await (await q.get(link)).json()) as Envelope
          seen.push(...ids(page))
          if (page.links.prev) backLinks.push(page.links.prev)
          link = page.links.next ?? null
        }
        expect(seen).toEqual(offsetOrder)
        // From the last page, prev links lead back through the same pages.
        const last = (await (await q.get(backLinks.at(-1)!)).json()) as Envelope
        expect(ids(last)).toEqual(offsetOrder.slice(-7 - (TOTAL % 7), -(TOTAL % 7)))
      },
    )

    it('refuses a tampered cursor or one from another query', async () => {
      const first = (await list('sort=title&per_page=5&cursor=')).body
      const cursor = first.meta.next_cursor as string
      expect(first.meta).toMatchObject({ per_page: 5, total: null, count: 'none' })
      const [payload, mac] = cursor.split('.') as [string, string]
      const forged = Buffer.from(
        Buffer.from(payload, 'base64url')
          .toString()
          .replace(/\d+\]\]$/, '1]]'),
      ).toString('base64url')
      expect((await list(`sort=title&cursor=${forged}.${mac}`)).status).toBe(422)
      // A MAC cut short, grown, or with one character changed.
      for (const bad of [
        mac.slice(1),
        `${mac}A`,
        `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      ])
        expect((await list(`sort=title&cursor=${payload}.${bad}`)).status).toBe(422)
      const other = await list(`sort=-title&cursor=${cursor}`)
      expect(other.status).toBe(422)
      expect(other.body.errors?.cursor?.[0]).toMatch(/another sort/)
      expect((await list(`sort=title&cursor=${cursor}&page=2`)).status).toBe(422)
      expect((await list(`sort=title&cursor=${cursor}`)).status).toBe(200)
    })
  })

  describe('count', () => {
    it('none leaves total out; estimated answers a number; filters are counted', async () => {
      const none = await list('count=none&per_page=5&page=2')
      expect(none.body.meta).toMatchObject({ total: null, last_page: null, count: 'none' })
      expect(none.body.links.last).toBeNull()
      expect(none.body.links.next).toBe('/posts?page=3&per_page=5&count=none')
      const estimated = await list('count=estimated&per_page=5&filter[published]=true')
      expect(estimated.body.meta.total).toBe(TOTAL / 2)
      expect(estimated.body.meta.count).toBe('exact')
    })

    it('links keep the filters, sort and fields', async () => {
      const { body } = await list('filter[published]=true&sort=-id&fields=id,title&per_page=4')
      expect(body.links.next).toBe(
        '/posts?page=2&per_page=4&filter[published]=true&sort=-id&fields=id,title',
      )
    })

    it('a cached total follows rows written outside the API within the cache lifetime', async () => {
      const clockApp = await startQueryApp(backend, { ttlMs: 60 })
      try {
        await clockApp.seed(30)
        const total = async () =>
          ((await (await clockApp.get('/posts?per_page=5')).json()) as Envelope).meta.total
        const filtered = async () =>
          (
            (await (
              await clockApp.get('/posts?per_page=5&filter[published]=true')
            ).json()) as Envelope
          ).meta.total
        expect(await total()).toBe(30)
        expect(await filtered()).toBe(15)
        await execSql(clockApp.database, 'DELETE FROM posts WHERE id % 2 = 0')
        // Within the bound the cache may still answer the old count; after it, never.
        await new Promise((resolve) => setTimeout(resolve, 80))
        expect(await total()).toBe(15)
        const published = (await (
          await clockApp.get('/posts?per_page=100&filter[published]=true')
        ).json()) as Envelope
        expect(await filtered()).toBe(published.data.length)
      } finally {
        await clockApp.close()
      }
    })
  })

  describe('HTTP caching', () => {
    it('strong ETag on lists (a digest of the bytes), 304 on If-None-Match, private no-cache', async () => {
      const first = await q.get('/posts?per_page=3')
      const tag = first.headers.get('etag')!
      expect(tag).toMatch(/^"[^"]+"$/)
      expect(first.headers.get('cache-control')).toBe('private, no-cache')
      const again = await q.get('/posts?per_page=3', { 'if-none-match': tag })
      expect(again.status).toBe(304)
      expect(await again.text()).toBe('')
      expect(again.headers.get('etag')).toBe(tag)
      const other = await q.get('/posts?per_page=4', { 'if-none-match': tag })
      expect(other.status).toBe(200)
      const bad = await q.get('/posts?page=0')
      expect(bad.headers.get('etag')).toBeNull()
      expect(bad.headers.get('cache-control')).toBe('private, no-cache')
    })
  })
})
