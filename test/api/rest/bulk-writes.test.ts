import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey } from '../../../src/api/index.ts'
import { MAX_BULK_RECORDS } from '../../../src/api/rest/bulk.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

type Json = Record<string, unknown>
type Post = { id: number; title: string; body: string; published: boolean; author_id: number }

describeEachDatabase('generated REST API: bulk create, update and delete', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let authorId: number
  let readOnly: { authorization: string }

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = await startGeneratedApi(scaffolded, backend)
    authorId = await api.createUser()
    const { rawKey } = await createApiKey(api.database, { name: 'reader', scopes: ['posts:read'] })
    readOnly = { authorization: `Bearer ${rawKey}` }
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  async function send(method: string, path: string, body?: unknown, headers?: Json) {
    const response = await api.request(method, path, body, headers as Record<string, string>)
    return { response, status: response.status, body: (await response.json()) as Json }
  }

  const post = (title: string, extra: Json = {}) => ({
    title,
    body: `${title} body`,
    author_id: authorId,
    ...extra,
  })

  async function createPosts(...titles: string[]): Promise<Post[]> {
    const { status, body } = await send(
      'POST',
      '/api/v1/posts',
      titles.map((t) => post(t)),
    )
    expect(status).toBe(201)
    return body.data as Post[]
  }

  async function titlesOf(ids: number[]): Promise<Array<string | undefined>> {
    return Promise.all(
      ids.map(async (id) => {
        const { status, body } = await send('GET', `/api/v1/posts/${id}`)
        return status === 200 ? (body.data as Post).title : undefined
      }),
    )
  }

  async function postCount(): Promise<number> {
    const { body } = await send('GET', '/api/v1/posts?count=exact&per_page=1')
    return (body.meta as { total: number }).total
  }

  describe('POST /api/v1/{resource} with an array', () => {
    it('creates every record in order: 201 {data: [...]}', async () => {
      const before = await postCount()
      const { status, body } = await send('POST', '/api/v1/posts', [
        post('First', { published: true }),
        post('Second'),
        post('Third'),
      ])
      expect(status).toBe(201)
      const data = body.data as Post[]
      expect(data.map((p) => p.title)).toEqual(['First', 'Second', 'Third'])
      expect(data.map((p) => p.published)).toEqual([true, false, false])
      expect(new Set(data.map((p) => p.id)).size).toBe(3)
      expect(await postCount()).toBe(before + 3)
      expect(await titlesOf(data.map((p) => p.id))).toEqual(['First', 'Second', 'Third'])
    })

    it('an object still creates one record: 201 {data: record}', async () => {
      const { status, body } = await send('POST', '/api/v1/posts', post('Alone'))
      expect(status).toBe(201)
      expect((body.data as Post).title).toBe('Alone')
    })

    it('422 naming the index of each invalid item, and nothing is created', async () => {
      const before = await postCount()
      const { status, body } = await send('POST', '/api/v1/posts', [
        post('Fine'),
        { title: 'No body', author_id: authorId },
        post('Unknown field', { colour: 'red' }),
        'not an object',
      ])
      expect(status).toBe(422)
      expect(body.errors).toEqual({
        '1.body': ['is required'],
        '2.colour': ['is not a known field'],
        '3': ['must be an object'],
      })
      expect(await postCount()).toBe(before)
    })

    it('all or none: a constraint failing on one item creates none', async () => {
      const before = await postCount()
      const { status, body } = await send('POST', '/api/v1/posts', [
        post('Fine'),
        post('Orphan', { author_id: 999_999_999 }),
      ])
      expect(status).toBe(422)
      expect(Object.values(body.errors as Json).flat()).toContain(
        'does not reference an existing record',
      )
      expect(await postCount()).toBe(before)
    })

    it(`422 for an empty array and for more than ${MAX_BULK_RECORDS} items`, async () => {
      const before = await postCount()
      const empty = await send('POST', '/api/v1/posts', [])
      expect(empty.status).toBe(422)
      expect(empty.body.errors).toEqual({ _body: ['must not be empty'] })
      const many = Array.from({ length: MAX_BULK_RECORDS + 1 }, (_, i) => post(`Post ${i}`))
      const tooMany = await send('POST', '/api/v1/posts', many)
      expect(tooMany.status).toBe(422)
      expect(tooMany.body.errors).toEqual({
        _body: [`must hold at most ${MAX_BULK_RECORDS} records`],
      })
      const atCap = await send('POST', '/api/v1/posts', many.slice(1))
      expect(atCap.status).toBe(201)
      expect(atCap.body.data).toHaveLength(MAX_BULK_RECORDS)
      expect(await postCount()).toBe(before + MAX_BULK_RECORDS)
    })

    it('hashes each password of a bulk user create', async () => {
      const { status, body } = await send('POST', '/api/v1/users', [
        { email: 'bulk-a@example.com', name: 'A', password: 'correct horse battery' },
        { email: 'bulk-b@example.com', name: 'B', password: 'another long password' },
      ])
      expect(status).toBe(201)
      const users = body.data as Json[]
      expect(users).toHaveLength(2)
      for (const user of users) {
        expect(user).not.toHaveProperty('password')
        expect(user).not.toHaveProperty('password_hash')
      }
      const duplicate = await send('POST', '/api/v1/users', [
        { email: 'bulk-c@example.com', name: 'C', password: 'correct horse battery' },
        { email: 'bulk-a@example.com', name: 'A again', password: 'correct horse battery' },
      ])
      expect(duplicate.status).toBe(422)
      expect(duplicate.body.errors).toEqual({ email: ['has already been taken'] })
      const list = await send('GET', '/api/v1/users?filter[email]=bulk-c@example.com')
      expect(list.body.data).toEqual([])
    })
  })

  describe('PATCH /api/v1/{resource} with [{id, ...changes}]', () => {
    it('updates each record with its own changes: 200 {data: [...]}', async () => {
      const [a, b] = await createPosts('A', 'B')
      const { status, body } = await send('PATCH', '/api/v1/posts', [
        { id: b!.id, title: 'B2', published: true },
        { id: a!.id, title: 'A2' },
      ])
      expect(status).toBe(200)
      const data = body.data as Post[]
      expect(data.map((p) => [p.id, p.title, p.published])).toEqual([
        [b!.id, 'B2', true],
        [a!.id, 'A2', false],
      ])
      expect(await titlesOf([a!.id, b!.id])).toEqual(['A2', 'B2'])
    })

    it('all or none: an unknown id answers 404 naming its index, and nothing changes', async () => {
      const [a] = await createPosts('Keep')
      const { status, body } = await send('PATCH', '/api/v1/posts', [
        { id: a!.id, title: 'Changed' },
        { id: 999_999_999, title: 'Nowhere' },
      ])
      expect(status).toBe(404)
      expect(body.error).toBe('Not Found: no record has the id at index 1')
      expect(await titlesOf([a!.id])).toEqual(['Keep'])
      const malformed = await send('PATCH', '/api/v1/posts', [
        { id: a!.id, title: 'Changed' },
        { id: 'abc', title: 'Nowhere' },
      ])
      expect(malformed.status).toBe(404)
      expect(malformed.body.error).toBe('Not Found: no record has the id at index 1')
      expect(await titlesOf([a!.id])).toEqual(['Keep'])
    })

    it('all or none: a constraint failing on one item changes none', async () => {
      const [a, b] = await createPosts('Keep A', 'Keep B')
      const { status } = await send('PATCH', '/api/v1/posts', [
        { id: a!.id, title: 'Changed' },
        { id: b!.id, author_id: 999_999_999 },
      ])
      expect(status).toBe(422)
      expect(await titlesOf([a!.id, b!.id])).toEqual(['Keep A', 'Keep B'])
    })

    it('422 for invalid items, naming their index, and nothing changes', async () => {
      const [a, b, c] = await createPosts('Keep A', 'Keep B', 'Keep C')
      const { status, body } = await send('PATCH', '/api/v1/posts', [
        { id: a!.id, title: 'Changed' },
        { id: b!.id, title: 42 },
        { title: 'no id' },
        { id: a!.id, title: 'twice' },
        { id: c!.id },
      ])
      expect(status).toBe(422)
      expect(body.errors).toEqual({
        '1.title': ['must be a string'],
        '2.id': ['is required'],
        '3.id': ['is given twice'],
        '4': ['must change at least one field'],
      })
      expect(await titlesOf([a!.id, b!.id])).toEqual(['Keep A', 'Keep B'])
      const notArray = await send('PATCH', '/api/v1/posts', { id: a!.id, title: 'x' })
      expect(notArray.status).toBe(422)
      expect(notArray.body.errors).toEqual({ _body: ['must be an array'] })
    })

    it('400 for If-Match, which belongs to one record', async () => {
      const [a] = await createPosts('Keep')
      const { status } = await send('PATCH', '/api/v1/posts', [{ id: a!.id, title: 'x' }], {
        'if-match': '*',
      })
      expect(status).toBe(400)
      expect(await titlesOf([a!.id])).toEqual(['Keep'])
    })

    it('hashes a password given in a bulk user update', async () => {
      const id = await api.createUser()
      const { status, body } = await send('PATCH', '/api/v1/users', [
        { id, password: 'a brand new password' },
      ])
      expect(status).toBe(200)
      expect(body.data as Json[]).toHaveLength(1)
      expect((body.data as Json[])[0]).not.toHaveProperty('password_hash')
    })
  })

  describe('DELETE /api/v1/{resource}?ids=', () => {
    it('deletes every record named: 200 {message, count}', async () => {
      const [a, b, c] = await createPosts('A', 'B', 'C')
      const { status, body } = await send('DELETE', `/api/v1/posts?ids=${a!.id},${c!.id}`)
      expect(status).toBe(200)
      expect(body).toEqual({ message: 'Deleted', count: 2 })
      expect(await titlesOf([a!.id, b!.id, c!.id])).toEqual([undefined, 'B', undefined])
    })

    it('all or none: an unknown id answers 404 naming its index, and nothing is deleted', async () => {
      const [a, b] = await createPosts('A', 'B')
      const { status, body } = await send('DELETE', `/api/v1/posts?ids=${a!.id},999999999,${b!.id}`)
      expect(status).toBe(404)
      expect(body.error).toBe('Not Found: no record has the id at index 1')
      expect(await titlesOf([a!.id, b!.id])).toEqual(['A', 'B'])
    })

    it('422 without ids, with an id twice or with too many; nothing is deleted', async () => {
      const [a] = await createPosts('A')
      for (const query of ['', '?ids=', `?ids=${a!.id},${a!.id}`]) {
        const { status } = await send('DELETE', `/api/v1/posts${query}`)
        expect(status, query).toBe(422)
      }
      const many = Array.from({ length: MAX_BULK_RECORDS + 1 }, (_, i) => i + 1).join(',')
      const tooMany = await send('DELETE', `/api/v1/posts?ids=${many}`)
      expect(tooMany.status).toBe(422)
      expect(tooMany.body.errors).toEqual({
        ids: [`must name at most ${MAX_BULK_RECORDS} records`],
      })
      expect(await titlesOf([a!.id])).toEqual(['A'])
    })
  })

  describe('scopes', () => {
    it('bulk routes need the write scope, as the single-record routes do', async () => {
      const [a] = await createPosts('Guarded')
      const attempts: Array<[string, string, unknown]> = [
        ['POST', '/api/v1/posts', [post('x')]],
        ['PATCH', '/api/v1/posts', [{ id: a!.id, title: 'x' }]],
        ['DELETE', `/api/v1/posts?ids=${a!.id}`, undefined],
      ]
      for (const [method, path, body] of attempts) {
        const { status, body: answer } = await send(method, path, body, readOnly)
        expect(status, method).toBe(403)
        expect(answer.error).toBe('This API key lacks the scope posts:write')
      }
      expect(await titlesOf([a!.id])).toEqual(['Guarded'])
    })
  })
})
