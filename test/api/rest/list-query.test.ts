import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/databases.ts'
import { execSql } from '../support.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

type Row = Record<string, unknown>
interface Envelope {
  data: Row[]
  meta: Row
  links: Record<string, string | null | undefined>
  errors?: Record<string, string[]>
}

describeEachDatabase('generated list endpoints: the query grammar', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  const authors: number[] = []
  const COUNT = 24

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = await startGeneratedApi(scaffolded, backend)
    authors.push(await api.createUser(), await api.createUser())
    for (let i = 0; i < COUNT; i++) {
      const response = await api.request('POST', '/api/v1/posts', {
        title: i % 2 === 0 ? `Kiln ${i}` : `Glaze ${i}`,
        body: i % 3 === 0 ? 'stoneware notes' : 'other',
        published: i % 4 === 0,
        token_count: i,
        author_id: authors[i % 2],
      })
      expect(response.status).toBe(201)
    }
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  const get = async (query: string, headers: Record<string, string> = {}) => {
    const response = await api.request('GET', `/api/v1/posts?${query}`, undefined, headers)
    const text = await response.text()
    return { response, body: (text ? JSON.parse(text) : undefined) as Envelope }
  }

  it('filters, sorts, selects fields and counts what matches', async () => {
    const { body } = await get(
      'filter[title][istarts_with]=kiln&filter[token_count][gte]=6&sort=-token_count&fields=id,token_count',
    )
    expect(body.data.map((r) => r.token_count)).toEqual([22, 20, 18, 16, 14, 12, 10, 8, 6])
    expect(Object.keys(body.data[0]!)).toEqual(['id', 'token_count'])
    expect(body.meta).toMatchObject({ total: 9, current_page: 1, per_page: 15 })
    const search = await get('search=STONEWARE&per_page=100')
    expect(search.body.meta.total).toBe(COUNT / 3)
  })

  it('answers 422 naming a bad parameter, and never filters a credential', async () => {
    const bad = await get('filter[created_at][gt]=yesterday&sort=nope')
    expect(bad.response.status).toBe(422)
    expect(Object.keys(bad.body.errors!).sort()).toEqual(['filter[created_at][gt]', 'sort'])
    const users = await api.request('GET', '/api/v1/users?filter[password_hash][starts_with]=h')
    expect(users.status).toBe(422)
  })

  it('an OR group over HTTP', async () => {
    const { body } = await get(
      'filter[or][0][token_count][lt]=2&filter[or][1][title]=Glaze 23&fields=token_count&per_page=100',
    )
    expect(body.data.map((r) => r.token_count)).toEqual([0, 1, 23])
  })

  it('GET /aggregate: counts and sums per group, the filters applying, under the read scope', async () => {
    const response = await api.request(
      'GET',
      '/api/v1/posts/aggregate?count=*&sum=token_count&max=token_count&group_by=author_id&filter[published]=false',
    )
    expect(response.status).toBe(200)
    const body = (await response.json()) as { data: Row[]; meta: Row }
    const unpublished = Array.from({ length: COUNT }, (_, i) => i).filter((i) => i % 4 !== 0)
    expect(body).toEqual({
      data: [0, 1].map((a) => {
        const mine = unpublished.filter((i) => i % 2 === a)
        return {
          group: { author_id: authors[a] },
          count: mine.length,
          sum: { token_count: mine.reduce((x, y) => x + y, 0) },
          max: { token_count: Math.max(...mine) },
        }
      }),
      meta: { groups: 2, truncated: false },
    })
    const bad = await api.request('GET', '/api/v1/users/aggregate?group_by=password_hash')
    expect(bad.status).toBe(422)
    expect(Object.keys(((await bad.json()) as Envelope).errors!)).toEqual(['group_by'])
    expect((await api.app.request('/api/v1/posts/aggregate')).status).toBe(401)
  })

  it('includes the author of each post, and a user’s posts', async () => {
    const { body } = await get('include=author&per_page=5')
    for (const post of body.data) {
      expect((post.author as Row).id).toBe(post.author_id)
      expect(post.author as Row).not.toHaveProperty('password_hash')
    }
    const users = await api.request('GET', `/api/v1/users?include=posts&filter[id]=${authors[0]}`)
    const user = ((await users.json()) as Envelope).data[0]!
    expect((user.posts as Row[]).length).toBe(10)
  })

  it('pages by cursor through every post once', async () => {
    const seen: unknown[] = []
    let link: string | null | undefined = '/api/v1/posts?sort=-published,title&per_page=5&cursor='
    while (link) {
      const page = (await (await api.request('GET', link)).json()) as Envelope
      seen.push(...page.data.map((r) => r.id))
      link = page.links.next
    }
    const all = (await get('sort=-published,title&per_page=100')).body.data.map((r) => r.id)
    expect(seen).toEqual(all)
    expect(new Set(seen).size).toBe(COUNT)
  })

  it('counts by strategy: none and estimated', async () => {
    expect((await get('count=none')).body.meta).toMatchObject({ total: null, count: 'none' })
    expect((await get('count=estimated&filter[published]=true')).body.meta).toMatchObject({
      total: COUNT / 4,
      count: 'exact',
    })
  })

  it('keeps total within its cache bound after rows change outside the API', async () => {
    const before = (await get('per_page=5')).body.meta.total as number
    await execSql(api.database, `DELETE FROM posts WHERE token_count = ${COUNT - 1}`)
    // The record counter's default lifetime is 5 s: a count taken now may be cached, but a
    // filtered count (a new filter digest) is read fresh.
    const fresh = await get('per_page=5&filter[token_count][gte]=0')
    expect(fresh.body.meta.total).toBe(before - 1)
  })

  describe('HTTP caching and PATCH', () => {
    it('strong ETag and 304 on list and show; private, no-cache everywhere', async () => {
      const list = await get('per_page=3')
      const tag = list.response.headers.get('etag')!
      expect(tag).toMatch(/^"[^"]+"$/)
      expect(list.response.headers.get('cache-control')).toBe('private, no-cache')
      expect((await get('per_page=3', { 'if-none-match': tag })).response.status).toBe(304)
      const id = list.body.data[0]!.id
      const show = await api.request('GET', `/api/v1/posts/${id}`)
      const showTag = show.headers.get('etag')!
      const again = await api.request('GET', `/api/v1/posts/${id}`, undefined, {
        'if-none-match': `"x", ${showTag}`,
      })
      expect(again.status).toBe(304)
      expect(await again.text()).toBe('')
      // After a change the tag no longer matches.
      const patched = await api.request('PATCH', `/api/v1/posts/${id}`, { title: 'Patched' })
      expect(patched.status).toBe(200)
      expect(((await patched.json()) as { data: Row }).data).toMatchObject({
        title: 'Patched',
        body: list.body.data[0]!.body,
      })
      const changed = await api.request('GET', `/api/v1/posts/${id}`, undefined, {
        'if-none-match': showTag,
      })
      expect(changed.status).toBe(200)
      const anonymous = await api.app.request('/api/v1/posts')
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers.get('cache-control')).toBe('private, no-cache')
    })
  })
})
