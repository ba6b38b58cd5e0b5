import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRecordCounter,
  defineListQuery,
  type ListEnvelope,
  type ListQueryContext,
  type ListQueryDefinition,
  runListQuery,
} from '../../../src/api/index.ts'
import { ValidationError } from '../../../src/core/errors.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { type Item, items, pgItems, seedItems, sqliteItems } from './structured-schema.ts'

/**
 * OR groups, `contains` / `overlaps` on arrays (PostgreSQL arrays, JSON arrays) and equality
 * on a JSON path, on every backend, checked against the same predicate in JavaScript.
 */
describeEachDatabase('richer list filters', (backend) => {
  let test: TestDatabase
  let db: ListQueryContext['db']
  let query: ListQueryDefinition
  const postgres = backend.dialect === 'postgres'

  beforeAll(async () => {
    test = await backend.create()
    db = test.database.db
    await seedItems(test.database)
    query = defineListQuery(postgres ? pgItems : sqliteItems)
  })
  afterAll(async () => {
    await test?.cleanup()
  })

  const counts = createRecordCounter({ ttlMs: 0 })
  const list = async (q: string, definition = query) =>
    (await runListQuery(definition, `/items?${q}&per_page=100`, {
      db,
      counts,
      caller: { scopes: ['*'] },
    })) as ListEnvelope
  const ids = (page: ListEnvelope) => page.data.map((record) => record.id)
  const expectIds = async (q: string, predicate: (item: Item) => boolean) => {
    const page = await list(q)
    const expected = items.filter(predicate).map((item) => item.id)
    expect(expected.length, `${q} selects some but not all`).toBeGreaterThan(0)
    expect(expected.length).toBeLessThan(items.length)
    expect(ids(page), q).toEqual(expected)
    expect(page.meta.total, q).toBe(expected.length)
  }
  const problems = async (q: string) => {
    try {
      await list(q)
    } catch (error) {
      if (error instanceof ValidationError) return error.errors
      throw error
    }
    throw new Error(`${q} was accepted`)
  }

  describe('OR groups', () => {
    it('matches any branch, each branch an AND of its conditions', async () => {
      await expectIds(
        'filter[or][0][title]=Item 3&filter[or][1][published]=true&filter[or][1][author_id]=2',
        (item) => item.title === 'Item 3' || (item.published && item.authorId === 2),
      )
    })

    it('is ANDed with the other filters', async () => {
      await expectIds(
        'filter[author_id][ne]=1&filter[or][0][token_count][lt]=10&filter[or][1][token_count][null]=true',
        (item) => item.authorId !== 1 && (item.tokenCount === null || item.tokenCount < 10),
      )
    })

    it('reads the same operators, values and allow-list as the other filters', async () => {
      await expectIds(
        'filter[or][0][title][starts_with]=Item 1&filter[or][5][id][in]=3,4',
        (item) => item.title.startsWith('Item 1') || [3, 4].includes(item.id),
      )
      expect(await problems('filter[or][0][token_count]=many&filter[or][1][api_token]=x')).toEqual({
        'filter[or][0][token_count]': ['must be a whole number'],
        'filter[or][1][api_token]': [expect.stringMatching(/^is not a filterable field/)],
      })
    })

    it('caps branches and counts their conditions among the filters', async () => {
      const eleven = Array.from({ length: 11 }, (_, i) => `filter[or][${i}][id]=${i + 1}`)
      expect(await problems(eleven.join('&'))).toEqual({ 'filter[or]': ['at most 10 branches'] })
      const fields = ['id', 'title', 'author_id', 'token_count', 'published', 'tags', 'meta']
      const many = Array.from(
        { length: 21 },
        (_, i) => `filter[or][${i % 3}][${fields[Math.floor(i / 3)]}][null]=false`,
      )
      expect(await problems(many.join('&'))).toEqual({
        filter: ['at most 20 filters per request'],
      })
    })

    it('never answers one grouping with the prepared statement of another', async () => {
      // The same conditions, grouped three ways: each is its own statement.
      await expectIds(
        'filter[or][0][author_id]=1&filter[or][0][published]=true',
        (item) => item.authorId === 1 && item.published,
      )
      await expectIds(
        'filter[or][0][author_id]=1&filter[or][1][published]=true',
        (item) => item.authorId === 1 || item.published,
      )
      await expectIds(
        'filter[author_id]=1&filter[or][0][published]=true',
        (item) => item.authorId === 1 && item.published,
      )
      await expectIds(
        'filter[or][0][author_id]=2&filter[or][1][published]=false',
        (item) => item.authorId === 2 || !item.published,
      )
    })

    it('keeps a cursor to its OR group', async () => {
      const q = 'filter[or][0][author_id]=1&filter[or][1][published]=true&per_page=3'
      const first = (await runListQuery(query, `/items?${q}&cursor=`, {
        db,
        counts,
      })) as ListEnvelope
      const cursor = first.meta.next_cursor!
      const next = (await runListQuery(query, `/items?${q}&cursor=${encodeURIComponent(cursor)}`, {
        db,
        counts,
      })) as ListEnvelope
      const expected = items.filter((item) => item.authorId === 1 || item.published)
      expect([...ids(first), ...ids(next)]).toEqual(expected.slice(0, 6).map((item) => item.id))
      const other = `filter[or][0][author_id]=2&filter[or][1][published]=true&per_page=3`
      await expect(
        runListQuery(query, `/items?${other}&cursor=${encodeURIComponent(cursor)}`, { db, counts }),
      ).rejects.toThrow(ValidationError)
    })
  })

  describe('arrays', () => {
    it('contains: every value is an element', async () => {
      await expectIds('filter[tags][contains]=power', (item) => item.tags.includes('power'))
      await expectIds('filter[tags][contains]=power,clay', (item) =>
        ['power', 'clay'].every((tag) => item.tags.includes(tag)),
      )
    })

    it('overlaps: some value is an element', async () => {
      await expectIds('filter[tags][overlaps]=glaze,clay', (item) =>
        ['glaze', 'clay'].some((tag) => item.tags.includes(tag)),
      )
    })

    it('inside an OR group', async () => {
      await expectIds(
        'filter[or][0][tags][contains]=glaze&filter[or][1][title]=Item 0',
        (item) => item.tags.includes('glaze') || item.title === 'Item 0',
      )
    })

    it('refuses the operators of scalars, with a hint', async () => {
      expect(await problems('filter[tags]=power')).toEqual({
        'filter[tags]': [
          postgres
            ? 'eq does not apply to array fields; use contains (every value) or overlaps (any value)'
            : expect.stringMatching(/^eq does not apply to a JSON field; filter one of its keys/),
        ],
      })
      expect(await problems('filter[title][overlaps]=a')).toEqual({
        'filter[title][overlaps]': ['overlaps only applies to array and JSON fields'],
      })
    })

    it('reads the values of an integer[] by the element type (SQLite: JSON numbers as text)', async () => {
      await expectIds('filter[scores][contains]=11', (item) => item.scores?.includes(11) ?? false)
      await expectIds(
        'filter[scores][overlaps]=0,13',
        (item) => item.scores?.some((score) => score === 0 || score === 13) ?? false,
      )
      if (postgres) {
        expect(await problems('filter[scores][contains]=1,x')).toEqual({
          'filter[scores][contains]': ['each value must be a whole number'],
        })
      } else expect(ids(await list('filter[scores][contains]=1,x'))).toEqual([])
    })

    it('contains on a JSON field holding an array; other JSON values match nothing', async () => {
      // `meta` holds objects: no element matches, though `red` is one of their values.
      expect(ids(await list('filter[meta][contains]=red'))).toEqual([])
      expect(ids(await list('filter[extra][overlaps]=red'))).toEqual([])
      // On SQLite the tags are a JSON array (covered above); on PostgreSQL a text[].
      expect(query.filterable.get('tags')?.structure).toBe(postgres ? 'array' : 'json')
    })

    it('null', async () => {
      await expectIds('filter[meta][null]=true', (item) => item.meta === null)
    })
  })

  describe('JSON paths', () => {
    it('equality on a key, and on a nested key', async () => {
      await expectIds('filter[meta.color]=red', (item) => item.meta?.color === 'red')
      await expectIds(
        'filter[meta.size.name]=large',
        (item) => (item.meta?.size as { name: string } | undefined)?.name === 'large',
      )
    })

    it('ne, in, not_in and null; booleans and numbers read as their JSON text', async () => {
      await expectIds('filter[meta.color][ne]=red', (item) => {
        const color = item.meta?.color
        return color !== undefined && color !== 'red'
      })
      await expectIds('filter[meta.color][in]=red,blue', (item) =>
        ['red', 'blue'].includes(item.meta?.color as string),
      )
      await expectIds('filter[meta.color][null]=true', (item) => item.meta?.color === undefined)
      await expectIds('filter[meta.featured]=true', (item) => item.meta?.featured === true)
      await expectIds('filter[meta.featured]=false', (item) => item.meta?.featured === false)
    })

    it('in an OR group', async () => {
      await expectIds(
        'filter[or][0][meta.color]=green&filter[or][1][meta.size.name]=small',
        (item) =>
          item.meta?.color === 'green' ||
          (item.meta?.size as { name: string } | undefined)?.name === 'small',
      )
    })

    it('on a json column as on jsonb (SQLite: JSON text)', async () => {
      const page = await list('filter[extra.color]=blue')
      expect(ids(page)).toEqual(
        items.filter((item) => item.meta?.color === 'blue').map((item) => item.id),
      )
    })

    it('refuses order operators, odd keys, deep paths and paths in other fields', async () => {
      expect(await problems('filter[meta.size][gt]=1')).toEqual({
        'filter[meta.size][gt]': [
          'a JSON path takes eq, ne, in, not_in, null (its values compare as text)',
        ],
      })
      expect(await problems('filter[meta.a b]=1')).toEqual({
        'filter[meta.a b]': ['JSON path keys are letters, digits, _ and - (at most 64 each)'],
      })
      expect(await problems('filter[meta.a.b.c.d.e]=1')).toEqual({
        'filter[meta.a.b.c.d.e]': ['a JSON path has at most 4 keys'],
      })
      expect(await problems('filter[title.x]=1')).toEqual({
        'filter[title.x]': [expect.stringMatching(/^is not a filterable field/)],
      })
    })

    it('repeats of one shape answer with their own values', async () => {
      for (const color of ['red', 'green', 'blue']) {
        const page = await list(`filter[meta.color]=${color}`)
        expect(ids(page)).toEqual(
          items.filter((item) => item.meta?.color === color).map((item) => item.id),
        )
      }
    })
  })

  it('credential fields stay out, and JSON/array fields only join filter (not sort)', async () => {
    expect(query.filterable.has('api_token')).toBe(false)
    expect([...query.filterable.keys()]).toContain('tags')
    expect([...query.filterable.keys()]).toContain('meta')
    expect(query.sortable.has('meta')).toBe(false)
    expect(() =>
      defineListQuery(postgres ? pgItems : sqliteItems, { filter: ['api_token'] }),
    ).toThrow(/sensitive/)
  })
})
