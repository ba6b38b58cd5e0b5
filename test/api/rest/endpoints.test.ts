import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getApiKey } from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

interface Post {
  id: number
  title: string
  body: string
  published: boolean
  token_count: number
  author_id: number
  created_at: string
  updated_at: string
}

describeEachDatabase('generated REST API endpoints', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let authorId: number

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = await startGeneratedApi(scaffolded, backend, {
      extend: (group) => {
        // A custom route added to the group: `:id` parameters work and it stays authenticated.
        group.get('/posts/:id/summary', (c) => {
          const key = getApiKey(c)
          return c.json({ id: Number(c.req.param('id')), key: key.name })
        })
      },
    })
    authorId = await api.createUser()
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  const createPost = async (fields: Partial<Post> = {}) => {
    const response = await api.request('POST', '/api/v1/posts', {
      title: 'Hello',
      body: 'World',
      author_id: authorId,
      ...fields,
    })
    expect(response.status).toBe(201)
    return ((await response.json()) as { data: Post }).data
  }

  describe('POST /api/v1/{resource}', () => {
    it('creates a record: 201 {data: resource}, defaults filled, snake_case fields', async () => {
      const response = await api.request('POST', '/api/v1/posts', {
        title: 'First',
        body: 'Body',
        author_id: authorId,
      })
      expect(response.status).toBe(201)
      expect(response.headers.get('content-type')).toMatch(/application\/json/)
      const { data } = (await response.json()) as { data: Post }
      expect(data).toMatchObject({
        title: 'First',
        body: 'Body',
        published: false,
        token_count: 0,
        author_id: authorId,
      })
      expect(typeof data.id).toBe('number')
      expect(new Date(data.created_at).toISOString()).toBe(data.created_at)
    })

    it('credentials are neither shown nor writable; a password is hashed by the app', async () => {
      for (const credential of [{ password_hash: 'x'.repeat(20) }, { remember_token: 'tok' }]) {
        const refused = await api.request('POST', '/api/v1/users', {
          email: 'someone@example.com',
          name: 'Someone',
          password: 'a long enough secret',
          ...credential,
        })
        expect(refused.status).toBe(422)
        const field = Object.keys(credential)[0]!
        expect(((await refused.json()) as { errors: object }).errors).toEqual({
          [field]: ['is not a known field'],
        })
      }
      const response = await api.request('POST', '/api/v1/users', {
        email: 'someone@example.com',
        name: 'Someone',
        password: 'a long enough secret',
      })
      expect(response.status).toBe(201)
      const { data } = (await response.json()) as { data: Record<string, unknown> }
      expect(data).toMatchObject({ email: 'someone@example.com', name: 'Someone' })
      expect(data).not.toHaveProperty('password_hash')
      expect(data).not.toHaveProperty('remember_token')
      const shown = await api.request('GET', `/api/v1/users/${data.id}`)
      const body = (await shown.json()) as { data: Record<string, unknown> }
      expect(Object.keys(body.data)).not.toContain('password_hash')
    })

    it('422 with field errors for missing, wrong-typed, too long and unknown fields', async () => {
      const response = await api.request('POST', '/api/v1/posts', {
        title: 'x'.repeat(201),
        published: 'yes',
        author_id: 1.5,
        colour: 'red',
      })
      expect(response.status).toBe(422)
      const body = (await response.json()) as { error: string; errors: Record<string, string[]> }
      expect(body.error).toBe('Validation failed')
      expect(Object.keys(body.errors).sort()).toEqual(
        ['author_id', 'body', 'colour', 'published', 'title'].sort(),
      )
      expect(body.errors).toEqual({
        title: ['must be at most 200 characters'],
        body: ['is required'],
        published: ['must be a boolean'],
        author_id: ['must be an integer'],
        colour: ['is not a known field'],
      })
    })

    it('a wrong-typed field says what was expected, never "is required"', async () => {
      const cases: [Record<string, unknown>, Record<string, string[]>][] = [
        [{ title: 5 }, { title: ['must be a string'] }],
        [{ published: 'yes' }, { published: ['must be a boolean'] }],
        [{ token_count: 1.5 }, { token_count: ['must be an integer'] }],
        [{ author_id: '1' }, { author_id: ['must be an integer'] }],
        [{ title: '' }, { title: ['must not be empty'] }],
        [{ body: null }, { body: ['must not be null'] }],
      ]
      for (const [fields, errors] of cases) {
        const response = await api.request('POST', '/api/v1/posts', {
          title: 't',
          body: 'b',
          author_id: authorId,
          ...fields,
        })
        expect(response.status, JSON.stringify(fields)).toBe(422)
        expect(await response.json()).toEqual({
          error: 'Validation failed',
          code: 'validation_failed',
          errors,
        })
      }
    })

    it('validates e-mail format and the minimum password length', async () => {
      const response = await api.request('POST', '/api/v1/users', {
        email: 'not-an-email',
        name: 'N',
        password: 'short',
      })
      expect(response.status).toBe(422)
      const { errors } = (await response.json()) as { errors: Record<string, string[]> }
      expect(Object.keys(errors).sort()).toEqual(['email', 'password'])
    })

    it('422 for a duplicate unique value and a reference to a missing record', async () => {
      const email = 'dup@example.com'
      const user = { email, name: 'D', password: 'long enough password' }
      expect((await api.request('POST', '/api/v1/users', user)).status).toBe(201)
      const duplicate = await api.request('POST', '/api/v1/users', user)
      expect(duplicate.status).toBe(422)
      expect(await duplicate.json()).toEqual({
        error: 'Validation failed',
        code: 'validation_failed',
        errors: { email: ['has already been taken'] },
      })
      const orphan = await api.request('POST', '/api/v1/posts', {
        title: 't',
        body: 'b',
        author_id: 987654,
      })
      expect(orphan.status).toBe(422)
    })

    it('400 for malformed JSON, 415 for another content type, both changing nothing', async () => {
      const before = await count(api)
      const malformed = await api.request('POST', '/api/v1/posts', '{"title": ')
      expect(malformed.status).toBe(400)
      expect(await malformed.json()).toEqual({ error: 'Malformed JSON body', code: 'bad_request' })
      const form = await api.app.request('/api/v1/posts', {
        method: 'POST',
        headers: { ...api.auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'title=a&body=b',
      })
      expect(form.status).toBe(415)
      const none = await api.app.request('/api/v1/posts', {
        method: 'POST',
        headers: api.auth,
        body: '{}',
      })
      expect(none.status).toBe(415)
      expect(await count(api)).toBe(before)
    })

    it('422 for a body that is not an object, or holds a NUL character', async () => {
      for (const body of ['[]', 'null', '"text"', '42']) {
        const response = await api.request('POST', '/api/v1/posts', body)
        expect(response.status).toBe(422)
      }
      const nul = await api.request('POST', '/api/v1/posts', {
        title: 'a\u0000b',
        body: 'b',
        author_id: authorId,
      })
      expect(nul.status).toBe(422)
      expect(((await nul.json()) as { errors: object }).errors).toEqual({
        title: ['must not contain NUL characters'],
      })
    })
  })

  describe('GET /api/v1/{resource}/{id}', () => {
    it('answers {data: resource}', async () => {
      const post = await createPost({ title: 'Shown' })
      const response = await api.request('GET', `/api/v1/posts/${post.id}`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ data: post })
    })

    it('404 for an unknown id, and for ids that cannot exist (non-numeric, too large)', async () => {
      for (const id of ['999999', 'abc', '1.5', '-1', '99999999999999999999', '0x10']) {
        const response = await api.request('GET', `/api/v1/posts/${id}`)
        expect(response.status, id).toBe(404)
        expect(await response.json()).toEqual({ error: 'Not Found', code: 'not_found' })
      }
    })
  })

  describe('PUT /api/v1/{resource}/{id}', () => {
    it('changes only the fields present', async () => {
      const post = await createPost({ title: 'Before', body: 'Kept', published: false })
      const response = await api.request('PUT', `/api/v1/posts/${post.id}`, { title: 'After' })
      expect(response.status).toBe(200)
      const { data } = (await response.json()) as { data: Post }
      expect(data).toMatchObject({ id: post.id, title: 'After', body: 'Kept', published: false })
      expect(data.token_count).toBe(post.token_count)
      expect(data.author_id).toBe(post.author_id)
    })

    it('an empty body changes no field', async () => {
      const post = await createPost({ title: 'Same' })
      const response = await api.request('PUT', `/api/v1/posts/${post.id}`, {})
      expect(response.status).toBe(200)
      const { data } = (await response.json()) as { data: Post }
      expect({ ...data, updated_at: undefined }).toEqual({ ...post, updated_at: undefined })
    })

    it('422 for unknown fields or bad values, and the record is unchanged', async () => {
      const post = await createPost({ title: 'Stable' })
      const cases: [Record<string, unknown>, Record<string, string[]>][] = [
        [{ title: 'New', nope: 1 }, { nope: ['is not a known field'] }],
        [{ title: null }, { title: ['must not be null'] }],
        [{ published: 'no' }, { published: ['must be a boolean'] }],
        [
          { token_count: 2.5, author_id: 'x' },
          {
            token_count: ['must be an integer'],
            author_id: ['must be an integer'],
          },
        ],
      ]
      for (const [body, errors] of cases) {
        const response = await api.request('PUT', `/api/v1/posts/${post.id}`, body)
        expect(response.status).toBe(422)
        expect(((await response.json()) as { errors: unknown }).errors).toEqual(errors)
      }
      const after = await api.request('GET', `/api/v1/posts/${post.id}`)
      expect(((await after.json()) as { data: Post }).data).toEqual(post)
    })

    it('404 for an unknown id; 400 and 415 for bad bodies', async () => {
      expect((await api.request('PUT', '/api/v1/posts/999999', { title: 'x' })).status).toBe(404)
      const post = await createPost()
      expect((await api.request('PUT', `/api/v1/posts/${post.id}`, '{bad')).status).toBe(400)
      const text = await api.app.request(`/api/v1/posts/${post.id}`, {
        method: 'PUT',
        headers: { ...api.auth, 'content-type': 'text/plain' },
        body: '{"title":"x"}',
      })
      expect(text.status).toBe(415)
    })
  })

  describe('DELETE /api/v1/{resource}/{id}', () => {
    it('answers {message: "Deleted"} and the record is gone', async () => {
      const post = await createPost()
      const response = await api.request('DELETE', `/api/v1/posts/${post.id}`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ message: 'Deleted' })
      expect((await api.request('GET', `/api/v1/posts/${post.id}`)).status).toBe(404)
      expect((await api.request('DELETE', `/api/v1/posts/${post.id}`)).status).toBe(404)
    })
  })

  describe('GET /api/v1/{resource}', () => {
    let listAuthor: number
    beforeAll(async () => {
      // A resource of its own, so the counts are exact: the comments of one post.
      listAuthor = await api.createUser()
    })

    it('pages with the {data, meta, links} envelope, default 15 per page', async () => {
      const table = await freshResource(api, listAuthor, 32)
      const first = await api.request('GET', table.path)
      expect(first.status).toBe(200)
      const body = (await first.json()) as ListBody
      expect(body.data).toHaveLength(15)
      expect(body.meta).toEqual({
        current_page: 1,
        per_page: 15,
        total: table.total,
        last_page: Math.ceil(table.total / 15),
        from: 1,
        to: 15,
      })
      expect(body.links).toEqual({
        first: `${table.path}?page=1`,
        last: `${table.path}?page=${Math.ceil(table.total / 15)}`,
        prev: null,
        next: `${table.path}?page=2`,
      })
    })

    it('middle and last pages, prev/next null at the ends, records in id order', async () => {
      const table = await freshResource(api, listAuthor, 0)
      const total = table.total
      const last = Math.ceil(total / 10)
      const middle = (await (
        await api.request('GET', `${table.path}?page=2&per_page=10`)
      ).json()) as ListBody
      expect(middle.meta).toMatchObject({ current_page: 2, per_page: 10, from: 11, to: 20, total })
      expect(middle.links.prev).toBe(`${table.path}?page=1&per_page=10`)
      expect(middle.links.next).toBe(`${table.path}?page=3&per_page=10`)
      const ids = middle.data.map((row) => row.id as number)
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
      const end = (await (
        await api.request('GET', `${table.path}?page=${last}&per_page=10`)
      ).json()) as ListBody
      expect(end.links.next).toBeNull()
      expect(end.meta.to).toBe(total)
      expect(end.data).toHaveLength(total - (last - 1) * 10)
      const beyond = (await (
        await api.request('GET', `${table.path}?page=${last + 5}&per_page=10`)
      ).json()) as ListBody
      expect(beyond.data).toEqual([])
      expect(beyond.meta).toMatchObject({ total, from: 0, to: 0, last_page: last })
      expect(beyond.links.next).toBeNull()
    })

    it('caps per_page at 100, however large', async () => {
      for (const perPage of ['1000', '9007199254740992', '1'.repeat(40)]) {
        const response = await api.request('GET', `/api/v1/posts?per_page=${perPage}`)
        expect(response.status, perPage).toBe(200)
        expect(((await response.json()) as ListBody).meta.per_page).toBe(100)
      }
    })

    it('422 for a non-numeric or < 1 page / per_page', async () => {
      for (const query of [
        'page=abc',
        'page=0',
        'page=-1',
        'per_page=0',
        'per_page=x',
        'page=1.5',
        'page=',
      ]) {
        const response = await api.request('GET', `/api/v1/posts?${query}`)
        expect(response.status, query).toBe(422)
        const body = (await response.json()) as { errors: Record<string, string[]> }
        expect(Object.keys(body.errors)).toEqual([query.split('=')[0]])
      }
    })

    it('total follows writes made through the API at once', async () => {
      const before = (
        (await (await api.request('GET', '/api/v1/posts?per_page=1')).json()) as ListBody
      ).meta.total
      const post = await createPost()
      const after = (
        (await (await api.request('GET', '/api/v1/posts?per_page=1')).json()) as ListBody
      ).meta.total
      expect(after).toBe(before + 1)
      await api.request('DELETE', `/api/v1/posts/${post.id}`)
      const deleted = (
        (await (await api.request('GET', '/api/v1/posts?per_page=1')).json()) as ListBody
      ).meta.total
      expect(deleted).toBe(before)
    })
  })

  describe('authentication and limits', () => {
    it('401 without a key, with a malformed or unknown key, on every route', async () => {
      for (const [method, path] of [
        ['GET', '/api/v1/posts'],
        ['POST', '/api/v1/posts'],
        ['GET', '/api/v1/posts/1'],
        ['PUT', '/api/v1/posts/1'],
        ['DELETE', '/api/v1/posts/1'],
        ['GET', '/api/v1/posts/1/summary'],
      ] as const) {
        for (const authorization of [
          undefined,
          'Bearer nope',
          `Bearer kl_live_${'A'.repeat(43)}`,
        ]) {
          const response = await api.app.request(path, {
            method,
            headers: authorization ? { authorization } : {},
          })
          expect(response.status, `${method} ${path} ${authorization}`).toBe(401)
          expect(await response.json()).toEqual({
            error: 'Unauthenticated',
            code: 'unauthenticated',
          })
        }
      }
    })

    it('carries the rate-limit headers', async () => {
      const response = await api.request('GET', '/api/v1/posts')
      expect(response.headers.get('ratelimit-limit')).toBe('1000000')
      expect(response.headers.get('ratelimit-remaining')).toMatch(/^\d+$/)
    })

    it('custom routes on the group take :id parameters and the key', async () => {
      const response = await api.request('GET', '/api/v1/posts/42/summary')
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ id: 42, key: 'tests' })
    })
  })
})

describeEachDatabase(
  'generated REST API rate limit',
  (backend) => {
    it('429 over the api limit', async () => {
      const scaffolded = await scaffoldApp(backend.dialect, { models: ['posts', 'users'] })
      const api = await startGeneratedApi(scaffolded, backend, { apiLimit: 3 })
      try {
        const statuses = []
        for (let i = 0; i < 4; i++)
          statuses.push((await api.request('GET', '/api/v1/posts')).status)
        expect(statuses).toEqual([200, 200, 200, 429])
      } finally {
        await api.close()
        scaffolded.cleanup()
      }
    })
  },
  { only: ['sqlite'] },
)

interface ListBody {
  data: Array<Record<string, unknown>>
  meta: {
    current_page: number
    per_page: number
    total: number
    last_page: number
    from: number
    to: number
  }
  links: { first: string; last: string; prev: string | null; next: string | null }
}

async function count(api: RunningApi): Promise<number> {
  const response = await api.request('GET', '/api/v1/posts?per_page=1')
  return ((await response.json()) as ListBody).meta.total
}

/** Adds `add` posts and returns the list path and the exact total, read back from the API. */
async function freshResource(api: RunningApi, authorId: number, add: number) {
  for (let i = 0; i < add; i++) {
    const response = await api.request('POST', '/api/v1/posts', {
      title: `Post ${i}`,
      body: 'b',
      author_id: authorId,
    })
    expect(response.status).toBe(201)
  }
  const response = await api.request('GET', '/api/v1/posts?per_page=100')
  const body = (await response.json()) as ListBody
  return { path: '/api/v1/posts', total: body.meta.total }
}
