import { afterAll, beforeAll, expect, it } from 'vitest'
import { defineListQuery, searchIndexMigration } from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { execSql } from '../support.ts'
import { type QueryApp, startQueryApp } from './support.ts'

interface Envelope {
  data: Array<Record<string, unknown>>
  meta: Record<string, unknown>
  links: Record<string, string | null | undefined>
}

describeEachDatabase('list counts and search indexes', (backend) => {
  let q: QueryApp
  const TOTAL = 300

  beforeAll(async () => {
    q = await startQueryApp(backend)
    await q.seed(TOTAL)
    await execSql(q.database, backend.dialect === 'sqlite' ? 'ANALYZE' : 'ANALYZE posts')
  })
  afterAll(async () => {
    await q?.close()
  })
  const get = async (path: string) => {
    const response = await q.get(path)
    return { status: response.status, body: (await response.json()) as Envelope }
  }

  it('count=estimated answers the planner estimate above the threshold, with no count query', async () => {
    q.mount('estimated', defineListQuery(q.schema.posts, { estimateThreshold: 10 }))
    q.resetQueries()
    const { body } = await get('/x/estimated?count=estimated&filter[published]=true&per_page=5')
    if (backend.dialect === 'sqlite') {
      // SQLite has no planner estimate: the count is exact.
      expect(body.meta).toMatchObject({ total: TOTAL / 2, count: 'exact' })
      return
    }
    expect(body.meta.count).toBe('estimated')
    const total = body.meta.total as number
    expect(total).toBeGreaterThan(TOTAL / 4)
    expect(total).toBeLessThan(TOTAL)
    expect(q.queries.some((text) => /count\(/i.test(text))).toBe(false)
    expect(body.meta.last_page).toBe(Math.ceil(total / 5))
  })

  it('count=estimated is cached like the exact count (per filter, until ttl or an API write)', async () => {
    if (backend.dialect === 'sqlite') return
    q.mount('estimated-cached', defineListQuery(q.schema.posts, { estimateThreshold: 10 }))
    const url = '/x/estimated-cached?count=estimated&filter[published]=false&per_page=5'
    const first = await get(url)
    // The planner's figure moves once the table's statistics do: a cached estimate does not.
    await execSql(
      q.database,
      `UPDATE pg_class SET reltuples = reltuples * 4 WHERE relname = 'posts'`,
    )
    try {
      const second = await get(url)
      expect(second.body.meta).toMatchObject({ count: 'estimated', total: first.body.meta.total })
      await q.counts.invalidate('posts')
      const third = await get(url)
      expect(third.body.meta.count).toBe('estimated')
      expect(third.body.meta.total).not.toBe(first.body.meta.total)
    } finally {
      await execSql(q.database, 'ANALYZE posts')
      await q.counts.invalidate('posts')
    }
  })

  it('count=estimated below the threshold counts exactly', async () => {
    const { body } = await get('/posts?count=estimated&filter[token_count]=0&per_page=5')
    expect(body.meta.count).toBe('exact')
    expect(body.meta.total).toBe(TOTAL / 5)
  })

  // Registered only where it applies: the other dialect has no such feature.
  if (backend.dialect === 'postgres')
    it('tsvector search uses its GIN index (the migration snippet matches the query)', async () => {
      const definition = defineListQuery(q.schema.posts, {
        search: ['title', 'body'],
        searchMode: 'tsvector',
        searchLanguage: 'english',
      })
      const migration = searchIndexMigration(definition)
      expect(migration).toMatch(/USING GIN \(to_tsvector\('english'::regconfig/)
      await execSql(q.database, migration)
      q.mount('fts', definition)
      const { body } = await get('/x/fts?search=potteries clay&per_page=100')
      expect(body.meta.total).toBe(TOTAL / 3)
      expect((await get('/x/fts?search=-clay "and" or (&per_page=100')).status).toBe(200)
      if (backend.name === 'pglite') {
        // One connection: the planner setting applies to the EXPLAIN below.
        await execSql(q.database, 'SET enable_seqscan = off')
        const pglite = q.database.dialect === 'postgres' ? q.database.pglite! : undefined
        const plan = await pglite!.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM posts WHERE to_tsvector('english'::regconfig, coalesce(posts.title, '') || ' ' || coalesce(posts.body, '')) @@ websearch_to_tsquery('english'::regconfig, 'clay')`,
        )
        await execSql(q.database, 'SET enable_seqscan = on')
        expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/posts_search_idx/)
      }
    })

  // Registered only where it applies: the other dialect has no such feature.
  if (backend.dialect === 'sqlite')
    it('FTS5 search stays in step with the table through the migration’s triggers', async () => {
      const definition = defineListQuery(q.schema.posts, {
        search: ['title', 'body'],
        searchMode: { fts5: 'posts_fts' },
      })
      await execSql(q.database, searchIndexMigration(definition))
      q.mount('fts', definition)
      expect((await get('/x/fts?search=pottery&per_page=100')).body.meta.total).toBe(TOTAL / 3)
      await execSql(q.database, `UPDATE posts SET body = 'a kiln firing' WHERE id = 2`)
      expect((await get('/x/fts?search=firing')).body.data.map((r) => r.id)).toEqual([2])
      for (const term of ['"', 'a OR b', 'NEAR(', '*', 'title:x', "'; drop"]) {
        expect((await get(`/x/fts?search=${encodeURIComponent(term)}`)).status).toBe(200)
      }
    })

  // Registered only where it applies: the other dialect has no such feature.
  if (backend.dialect === 'sqlite')
    it('cursor pages over a nullable sort key visit every record once (nulls last ascending)', async () => {
      for (const sort of ['published_at', '-published_at', 'published_at,-title']) {
        const offset = (await get(`/posts?sort=${sort}&per_page=100&page=1`)).body.data
        const rest = (await get(`/posts?sort=${sort}&per_page=100&page=2`)).body.data
        const rest2 = (await get(`/posts?sort=${sort}&per_page=100&page=3`)).body.data
        const expected = [...offset, ...rest, ...rest2].map((r) => r.id)
        const seen: unknown[] = []
        let link: string | null | undefined = `/posts?sort=${sort}&per_page=40&cursor=`
        while (link) {
          const page: Envelope = (await get(link)).body
          seen.push(...page.data.map((r) => r.id))
          link = page.links.next
        }
        expect(seen).toEqual(expected)
        const all = [...offset, ...rest, ...rest2]
        const nulls = all.filter((r) => r.published_at === null).length
        expect(nulls).toBe(TOTAL / 4)
        const firstNull = all.findIndex((r) => r.published_at === null)
        expect(firstNull).toBe(sort.startsWith('-') ? 0 : TOTAL - nulls)
      }
    })
})
