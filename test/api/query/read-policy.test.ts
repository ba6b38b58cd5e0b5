import { eq, ne } from 'drizzle-orm'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  belongsTo,
  createRecordCounter,
  defineListQuery,
  runListQuery,
} from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { type QueryApp, startQueryApp } from './support.ts'

describeEachDatabase('include reads the related resource under its own policy', (backend) => {
  let q: QueryApp
  let userIds: number[]

  beforeAll(async () => {
    q = await startQueryApp(backend)
    ;({ userIds } = await q.seed(6, 3))
  })
  afterAll(async () => {
    await q?.close()
  })

  const list = async (
    definition: ReturnType<typeof defineListQuery>,
    query: string,
    caller: { id?: number; scopes: string[] } = { scopes: ['*'] },
  ) =>
    runListQuery(definition, `/x?${query}`, {
      db: q.database.db,
      counts: createRecordCounter({ ttlMs: 0 }),
      caller,
    })

  it('shows only the fields the related resource shows, whatever order they were declared in', async () => {
    const { posts, users } = q.schema
    const postsQuery = defineListQuery(posts, {
      include: { author: belongsTo(users, posts.authorId, users.id) },
    })
    // Declared after the resource that includes it, as a controller loaded later would be.
    defineListQuery(users, { fields: ['id', 'name'] })
    const page = await list(postsQuery, 'include=author')
    for (const record of page.data) {
      expect(Object.keys(record.author as object).sort()).toEqual(['id', 'name'])
    }
  })

  it('keeps to the related resource’s rows for this caller, and the list to its own', async () => {
    const { posts, users } = q.schema
    const hidden = userIds[0]!
    defineListQuery(users, {
      fields: ['id', 'name'],
      // A key with users:admin reads every user; the others not the first one.
      rows: (caller) =>
        caller?.scopes.includes('users:admin')
          ? undefined
          : { where: ne(users.id, hidden), key: `not:${hidden}` },
    })
    const postsQuery = defineListQuery(posts, {
      include: { author: belongsTo(users, posts.authorId, users.id) },
      rows: (caller) => ({ where: eq(posts.published, true), key: `published:${caller?.id}` }),
    })
    const reader = { id: 7, scopes: ['posts:read', 'users:read'] }
    const page = await list(postsQuery, 'include=author&per_page=100', reader)
    expect(page.data.length).toBeGreaterThan(0)
    expect(page.meta.total).toBe(page.data.length)
    for (const record of page.data) {
      expect(record.published).toBe(true)
      const author = record.author as { id: number } | null
      if (record.author_id === hidden) expect(author).toBeNull()
      else expect(author?.id).toBe(record.author_id)
    }
    expect(page.data.some((record) => record.author_id === hidden)).toBe(true)
    expect(page.data.some((record) => record.author !== null)).toBe(true)
    const admin = await list(postsQuery, 'include=author&per_page=100', {
      id: 8,
      scopes: ['posts:read', 'users:read', 'users:admin'],
    })
    for (const record of admin.data) {
      expect((record.author as { id: number }).id).toBe(record.author_id)
    }
  })

  it('refuses a relation without the related read scope, and without any caller', async () => {
    const { posts, users } = q.schema
    defineListQuery(users)
    const postsQuery = defineListQuery(posts, {
      include: { author: belongsTo(users, posts.authorId, users.id) },
    })
    await expect(
      list(postsQuery, 'include=author', { scopes: ['posts:read'] }),
    ).rejects.toMatchObject({ status: 403, message: 'This API key lacks the scope users:read' })
    await expect(
      runListQuery(postsQuery, '/x?include=author', {
        db: q.database.db,
        counts: createRecordCounter({ ttlMs: 0 }),
      }),
    ).rejects.toMatchObject({ status: 403 })
    defineListQuery(users, { readScope: 'people:read' })
    await expect(
      list(postsQuery, 'include=author', { scopes: ['posts:read', 'users:read'] }),
    ).rejects.toMatchObject({ status: 403, message: 'This API key lacks the scope people:read' })
    const page = await list(postsQuery, 'include=author', { scopes: ['posts:read', 'people:read'] })
    expect(page.data.length).toBeGreaterThan(0)
  })
})
