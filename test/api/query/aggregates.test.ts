import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  type AggregateEnvelope,
  defineListQuery,
  type ListQueryDefinition,
  runAggregateQuery,
} from '../../../src/api/index.ts'
import { ValidationError } from '../../../src/core/errors.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { type Item, items, pgItems, seedItems, sqliteItems } from './structured-schema.ts'

/** count, sum, avg, min and max with group_by, filters applying, checked against JavaScript. */
describeEachDatabase('aggregates', (backend) => {
  let test: TestDatabase
  let query: ListQueryDefinition
  const postgres = backend.dialect === 'postgres'
  const table = () => (postgres ? pgItems : sqliteItems)

  beforeAll(async () => {
    test = await backend.create()
    await seedItems(test.database)
    query = defineListQuery(table(), { search: ['title'] })
  })
  afterAll(async () => {
    await test?.cleanup()
  })

  const aggregate = (q: string, definition = query, caller?: { scopes: string[] }) =>
    runAggregateQuery(definition, `/items/aggregate?${q}`, { db: test.database.db, caller })
  const problems = async (q: string) => {
    try {
      await aggregate(q)
    } catch (error) {
      if (error instanceof ValidationError) return error.errors
      throw error
    }
    throw new Error(`${q} was accepted`)
  }
  /** The groups JavaScript computes from `items`. */
  const expected = (rows: Item[], key: (item: Item) => unknown) => {
    const groups = new Map<unknown, Item[]>()
    for (const item of rows) groups.set(key(item), [...(groups.get(key(item)) ?? []), item])
    return [...groups.entries()].sort(([a], [b]) => Number(a) - Number(b))
  }
  const stats = (rows: Item[]) => {
    const counts = rows.map((item) => item.tokenCount).filter((n): n is number => n !== null)
    const total = counts.reduce((a, b) => a + b, 0)
    return {
      sum: counts.length === 0 ? null : total,
      avg: counts.length === 0 ? null : total / counts.length,
      min: counts.length === 0 ? null : Math.min(...counts),
      max: counts.length === 0 ? null : Math.max(...counts),
    }
  }

  it('counts every row without group_by, and counts by default', async () => {
    const all = await aggregate('count=*')
    expect(all).toEqual({
      data: [{ group: {}, count: items.length }],
      meta: { groups: 1, truncated: false },
    })
    expect(await aggregate('')).toEqual(all)
  })

  it('count, sum, avg, min and max per group, ordered by the group', async () => {
    const answer = await aggregate(
      'count=*&sum=token_count&avg=token_count&min=token_count,title&max=token_count&group_by=author_id',
    )
    const groups = expected(items, (item) => item.authorId)
    expect(answer.meta).toEqual({ groups: groups.length, truncated: false })
    answer.data.forEach((group, i) => {
      const [author, rows] = groups[i]!
      const s = stats(rows)
      expect(group.group).toEqual({ author_id: author })
      expect(group.count).toBe(rows.length)
      expect(group.sum).toEqual({ token_count: s.sum })
      expect(group.avg!.token_count).toBeCloseTo(s.avg!, 9)
      expect(group.min).toEqual({
        token_count: s.min,
        title: rows.map((item) => item.title).sort()[0],
      })
      expect(group.max).toEqual({ token_count: s.max })
    })
  })

  it('filters, OR groups, JSON paths and search apply', async () => {
    const answer = await aggregate(
      'count=*&sum=token_count&group_by=published&filter[or][0][author_id]=1&filter[or][1][meta.color]=red&search=Item 1',
    )
    const rows = items.filter(
      (item) =>
        (item.authorId === 1 || item.meta?.color === 'red') && item.title.includes('Item 1'),
    )
    const groups = expected(rows, (item) => item.published)
    expect(answer.data).toEqual(
      groups.map(([published, members]) => ({
        group: { published },
        count: members.length,
        sum: { token_count: stats(members).sum },
      })),
    )
  })

  it('groups by several fields, NULL last', async () => {
    const answer = await aggregate('group_by=token_count,author_id&filter[id][lte]=16')
    const rows = items.filter((item) => item.id <= 16)
    const keys = answer.data.map((g) => [g.group.token_count, g.group.author_id])
    const expectedKeys = [...new Set(rows.map((item) => `${item.tokenCount}:${item.authorId}`))]
      .map((key) => key.split(':').map((part) => (part === 'null' ? null : Number(part))))
      .sort(([a1, b1], [a2, b2]) =>
        a1 === a2 ? Number(b1) - Number(b2) : a1 === null ? 1 : a2 === null ? -1 : a1! - a2!,
      )
    expect(keys).toEqual(expectedKeys)
    expect(answer.data.reduce((n, g) => n + g.count!, 0)).toBe(rows.length)
  })

  it('an empty match: count 0, sums and extremes null', async () => {
    const answer = await aggregate('count=*&sum=token_count&max=token_count&filter[id][gt]=1000')
    expect(answer.data).toEqual([
      { group: {}, count: 0, sum: { token_count: null }, max: { token_count: null } },
    ])
  })

  it('caps groups and says so', async () => {
    const capped = defineListQuery(table(), { limits: { maxGroups: 5 } })
    const answer = (await aggregate('group_by=id', capped)) as AggregateEnvelope
    expect(answer.data.map((g) => g.group.id)).toEqual([1, 2, 3, 4, 5])
    expect(answer.meta).toEqual({ groups: 5, truncated: true })
  })

  it('refuses what the allow-lists do not name, and list-only parameters', async () => {
    expect(await problems('sum=title&avg=api_token&group_by=meta&count=id&sort=id')).toEqual({
      sum: [expect.stringMatching(/^"title" is not allowed; allowed: id, author_id, token_count$/)],
      avg: [expect.stringMatching(/^"api_token" is not allowed/)],
      group_by: [expect.stringMatching(/^"meta" is not allowed/)],
      count: ['must be *'],
      sort: ['does not apply to aggregates'],
    })
    expect(await problems('group_by=id,title,author_id,published')).toEqual({
      group_by: ['at most 3 fields'],
    })
    expect(await problems('filter[nope]=1')).toEqual({
      'filter[nope]': [expect.stringMatching(/^is not a filterable field/)],
    })
  })

  it('allow-lists of their own; credential fields refused at definition', () => {
    const narrow = defineListQuery(table(), { aggregate: { sum: [], groupBy: ['author_id'] } })
    expect([...narrow.aggregates.sum.keys()]).toEqual([])
    expect([...narrow.aggregates.groupBy.keys()]).toEqual(['author_id'])
    expect(() => defineListQuery(table(), { aggregate: { groupBy: ['api_token'] } })).toThrow(
      /sensitive/,
    )
    expect(() => defineListQuery(table(), { aggregate: { sum: ['title'] } })).toThrow(
      /is not numeric/,
    )
    expect(query.aggregates.min.has('api_token')).toBe(false)
  })

  it("keeps to the caller's rows (the resource's row filter)", async () => {
    const own = defineListQuery(table(), {
      rows: () => ({ where: eq(table().authorId, 2), key: 'author-2' }),
    })
    const answer = await aggregate('count=*', own, { scopes: ['*'] })
    expect(answer.data[0]!.count).toBe(items.filter((item) => item.authorId === 2).length)
  })
})
