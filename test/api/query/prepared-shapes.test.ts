import { eq } from 'drizzle-orm'
import {
  bigint,
  boolean,
  date,
  doublePrecision,
  numeric,
  pgEnum,
  pgTable,
  serial,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { integer, real, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  belongsTo,
  createRecordCounter,
  defineListQuery,
  hasMany,
  type ListEnvelope,
  type ListQueryContext,
  type ListQueryDefinition,
  runListQuery,
} from '../../../src/api/index.ts'
import { preparedShapeCount } from '../../../src/api/query/statement.ts'
import type { TestDatabase } from '../../support/databases.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { execSql } from '../support.ts'

/**
 * The page statement is prepared once per query shape and run with each request's values: these
 * check that a repeated shape never answers with an earlier request's values, for every kind of
 * value the grammar binds, and that the number of prepared shapes stays within its bound.
 */

const color = pgEnum('gadget_color', ['red', 'green', 'blue'])
const pgGadgets = pgTable('gadgets', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  color: color('color').notNull(),
  price: numeric('price', { precision: 10, scale: 2 }).notNull(),
  weight: doublePrecision('weight').notNull(),
  big: bigint('big', { mode: 'bigint' }).notNull(),
  ref: uuid('ref').notNull(),
  active: boolean('active').notNull(),
  madeAt: timestamp('made_at', { withTimezone: true }).notNull(),
  madeOn: date('made_on').notNull(),
  seenAt: timestamp('seen_at', { mode: 'string' }),
  tenant: text('tenant').notNull(),
})
const sqliteGadgets = sqliteTable('gadgets', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: sqliteText('name').notNull(),
  ref: sqliteText('ref').notNull(),
  color: sqliteText('color', { enum: ['red', 'green', 'blue'] }).notNull(),
  weight: real('weight').notNull(),
  active: integer('active', { mode: 'boolean' }).notNull(),
  madeAt: integer('made_at', { mode: 'timestamp' }).notNull(),
  madeMs: integer('made_ms', { mode: 'timestamp_ms' }).notNull(),
  seenAt: integer('seen_at', { mode: 'timestamp' }),
  tenant: sqliteText('tenant').notNull(),
})

/** Makers keyed by text (a uuid on Postgres): each gadget's `ref` points at its own. */
const pgMakers = pgTable('makers', { id: uuid('id').primaryKey(), name: text('name').notNull() })
const sqliteMakers = sqliteTable('makers', {
  id: sqliteText('id').primaryKey(),
  name: sqliteText('name').notNull(),
})

const ROWS = 24
const COLORS = ['red', 'green', 'blue'] as const
const makerId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`
const day = (i: number) => new Date(Date.UTC(2026, 0, 1 + i, 12, 0, 0))
/** Every row's values as JavaScript sees them; `seenAt` is null on every fourth row. */
const rows = Array.from({ length: ROWS }, (_, i) => ({
  id: i + 1,
  name: i % 3 === 0 ? `50% off_${i}` : `Plain item ${i}`,
  color: COLORS[i % 3]!,
  price: (i * 1.25).toFixed(2),
  // Some weights repeat, so sorting on them needs the tie-breaker.
  weight: (i % 7) * 0.5,
  big: BigInt(i) * 10n ** 15n,
  ref: makerId(i),
  active: i % 2 === 0,
  madeAt: day(i),
  madeOn: `2026-02-${String(1 + i).padStart(2, '0')}`,
  seenAt: i % 4 === 0 ? null : new Date(Date.UTC(2026, 2, 1, 0, 0, i)),
  tenant: i % 2 === 0 ? 'even' : 'odd',
}))
type Gadget = (typeof rows)[number]

describeEachDatabase('list queries of one shape, prepared once', (backend) => {
  let test: TestDatabase
  let db: ListQueryContext['db']
  let gadgets: ListQueryDefinition
  const postgres = backend.dialect === 'postgres'
  const table = () => (postgres ? pgGadgets : sqliteGadgets)

  beforeAll(async () => {
    test = await backend.create()
    db = test.database.db
    await execSql(
      test.database,
      postgres
        ? `create type gadget_color as enum ('red', 'green', 'blue');
           create table gadgets (id serial primary key, name text not null,
             color gadget_color not null, price numeric(10, 2) not null,
             weight double precision not null, big bigint not null, ref uuid not null,
             active boolean not null, made_at timestamptz not null, made_on date not null,
             seen_at timestamp, tenant text not null);
           create table makers (id uuid primary key, name text not null)`
        : `create table gadgets (id integer primary key autoincrement, name text not null,
             ref text not null, color text not null, weight real not null,
             active integer not null, made_at integer not null, made_ms integer not null,
             seen_at integer, tenant text not null);
           create table makers (id text primary key, name text not null)`,
    )
    // biome-ignore lint/suspicious/noExplicitAny: one insert for both dialects' tables
    await (db as any)
      .insert(postgres ? pgMakers : sqliteMakers)
      .values(rows.map((_, i) => ({ id: makerId(i), name: `Maker ${i}` })))
    const values = rows.map(({ id: _, ...row }) =>
      postgres
        ? { ...row, seenAt: row.seenAt?.toISOString().replace('T', ' ').slice(0, 19) ?? null }
        : { ...row, madeMs: row.madeAt },
    )
    // biome-ignore lint/suspicious/noExplicitAny: one insert for both dialects' tables
    await (db as any).insert(table()).values(values)
    gadgets = defineListQuery(table(), { search: ['name'] })
  })
  afterAll(async () => {
    await test?.cleanup()
  })

  const counts = createRecordCounter()
  const list = async (query: string, definition = gadgets, extra: Partial<ListQueryContext> = {}) =>
    (await runListQuery(definition, `/gadgets?${query}`, {
      db,
      counts,
      caller: { scopes: ['*'] },
      ...extra,
    })) as ListEnvelope
  const ids = (page: ListEnvelope) => page.data.map((record) => record.id)
  const expectIds = (predicate: (row: Gadget) => boolean) =>
    rows.filter(predicate).map((row) => row.id)

  /** Lists `query(value)` for each value: one shape, so one prepared statement, right rows each. */
  async function sameShape<T>(
    query: (value: T) => string,
    cases: Array<[T, (row: Gadget) => boolean]>,
  ) {
    const before = preparedShapeCount(db, gadgets)
    for (const [value, predicate] of cases) {
      const page = await list(`${query(value)}&per_page=100`)
      expect(ids(page), query(value)).toEqual(expectIds(predicate))
      expect(page.meta.total, query(value)).toBe(expectIds(predicate).length)
    }
    expect(preparedShapeCount(db, gadgets) - before, query(cases[0]![0])).toBe(1)
  }

  it('text, enum and LIKE patterns with escapes', async () => {
    await sameShape(
      (v: string) => `filter[name]=${encodeURIComponent(v)}`,
      [
        ['Plain item 1', (r) => r.name === 'Plain item 1'],
        ['50% off_3', (r) => r.name === '50% off_3'],
      ],
    )
    await sameShape(
      (v: string) => `filter[color]=${v}`,
      [
        ['red', (r) => r.color === 'red'],
        ['blue', (r) => r.color === 'blue'],
      ],
    )
    await sameShape(
      (v: string) => `filter[name][contains]=${encodeURIComponent(v)}`,
      [
        ['% off_', (r) => r.name.includes('% off_')],
        ['item 1', (r) => r.name.includes('item 1')],
        ['_', (r) => r.name.includes('_')],
      ],
    )
    await sameShape(
      (v: string) => `filter[name][istarts_with]=${encodeURIComponent(v)}`,
      [
        ['PLAIN', (r) => r.name.toLowerCase().startsWith('plain')],
        ['50%', (r) => r.name.startsWith('50%')],
      ],
    )
    await sameShape(
      (v: string) => `filter[name][ends_with]=${encodeURIComponent(v)}`,
      [
        ['_3', (r) => r.name.endsWith('_3')],
        ['item 2', (r) => r.name.endsWith('item 2')],
      ],
    )
    await sameShape(
      (v: string) => `search=${encodeURIComponent(v)}`,
      [
        ['off_', (r) => r.name.includes('off_')],
        ['item 2', (r) => r.name.toLowerCase().includes('item 2')],
      ],
    )
  })

  it('numbers, booleans and timestamps, encoded by their columns', async () => {
    await sameShape(
      (v: number) => `filter[weight][gt]=${v}`,
      [
        [1, (r) => r.weight > 1],
        [2.5, (r) => r.weight > 2.5],
      ],
    )
    await sameShape(
      (v: boolean) => `filter[active]=${v}`,
      [
        [true, (r) => r.active],
        [false, (r) => !r.active],
      ],
    )
    await sameShape(
      (v: number) => `filter[made_at][gte]=${day(v).toISOString()}`,
      [
        [3, (r) => r.madeAt >= day(3)],
        [20, (r) => r.madeAt >= day(20)],
      ],
    )
    await sameShape(
      (v: [number, number]) =>
        `filter[made_at][between]=${v.map((i) => day(i).toISOString()).join(',')}`,
      [
        [[2, 5], (r) => r.madeAt >= day(2) && r.madeAt <= day(5)],
        [[10, 11], (r) => r.madeAt >= day(10) && r.madeAt <= day(11)],
      ],
    )
    await sameShape(
      (v: string) => `filter[seen_at][lt]=${v}`,
      [
        [
          '2026-03-01T00:00:05Z',
          (r) => r.seenAt !== null && r.seenAt < new Date('2026-03-01T00:00:05Z'),
        ],
        [
          '2026-03-01T00:00:15Z',
          (r) => r.seenAt !== null && r.seenAt < new Date('2026-03-01T00:00:15Z'),
        ],
      ],
    )
    if (!postgres) {
      await sameShape(
        (v: number) => `filter[made_ms][lte]=${day(v).toISOString()}`,
        [
          [4, (r) => r.madeAt <= day(4)],
          [9, (r) => r.madeAt <= day(9)],
        ],
      )
      return
    }
    await sameShape(
      (v: string) => `filter[price][gte]=${v}`,
      [
        ['10', (r) => Number(r.price) >= 10],
        ['2.50', (r) => Number(r.price) >= 2.5],
      ],
    )
    await sameShape(
      (v: bigint) => `filter[big][lt]=${v}`,
      [
        [3n * 10n ** 15n, (r) => r.big < 3n * 10n ** 15n],
        [9_000_000_000_000_000_000n, (r) => r.big < 9_000_000_000_000_000_000n],
      ],
    )
    await sameShape(
      (v: number) => `filter[ref]=${rows[v]!.ref}`,
      [
        [4, (r) => r.id === 5],
        [7, (r) => r.id === 8],
      ],
    )
    await sameShape(
      (v: string) => `filter[made_on][lte]=${v}`,
      [
        ['2026-02-03', (r) => r.madeOn <= '2026-02-03'],
        ['2026-02-12', (r) => r.madeOn <= '2026-02-12'],
      ],
    )
  })

  it('in-lists: the same length is one shape, another length another', async () => {
    const before = preparedShapeCount(db, gadgets)
    await sameShape(
      (v: number[]) => `filter[id][in]=${v.join(',')}`,
      [
        [[1, 2], (r) => r.id === 1 || r.id === 2],
        [[7, 9], (r) => r.id === 7 || r.id === 9],
      ],
    )
    await sameShape(
      (v: string[]) => `filter[color][not_in]=${v.join(',')}`,
      [
        [['red', 'green'], (r) => r.color === 'blue'],
        [['blue', 'green'], (r) => r.color === 'red'],
      ],
    )
    await sameShape(
      (v: number[]) => `filter[id][in]=${v.join(',')}`,
      [[[3, 4, 5], (r) => r.id >= 3 && r.id <= 5]],
    )
    expect(preparedShapeCount(db, gadgets) - before).toBe(3)
  })

  it('null and not null, and an empty needle, are shapes of their own', async () => {
    const nulls = await list('filter[seen_at][null]=true&per_page=100')
    const present = await list('filter[seen_at][null]=false&per_page=100')
    expect(ids(nulls)).toEqual(expectIds((r) => r.seenAt === null))
    expect(ids(present)).toEqual(expectIds((r) => r.seenAt !== null))
    const empty = await list('filter[name][contains]=&per_page=100')
    const needle = await list('filter[name][contains]=item&per_page=100')
    expect(ids(empty)).toEqual(expectIds(() => true))
    expect(ids(needle)).toEqual(expectIds((r) => r.name.includes('item')))
  })

  /** Every record in `sort` order by following `next` cursors, then back by `prev` cursors. */
  async function walk(sort: string, expected: number[]) {
    const seen: number[] = []
    let page = await list(`sort=${sort}&per_page=5&cursor=`)
    const pages = [page]
    seen.push(...ids(page).map(Number))
    while (page.meta.next_cursor) {
      page = await list(`sort=${sort}&per_page=5&cursor=${page.meta.next_cursor}`)
      pages.push(page)
      seen.push(...ids(page).map(Number))
    }
    expect(seen, sort).toEqual(expected)
    const back: number[] = []
    let previous = pages[pages.length - 1]!
    back.unshift(...ids(previous).map(Number))
    while (previous.meta.prev_cursor) {
      previous = await list(`sort=${sort}&per_page=5&cursor=${previous.meta.prev_cursor}`)
      back.unshift(...ids(previous).map(Number))
    }
    expect(back, sort).toEqual(expected)
  }

  it('cursor pages forward and back: one keyset shape per direction, new values each page', async () => {
    const byWeight = [...rows].sort((a, b) => b.weight - a.weight || b.id - a.id)
    await walk(
      '-weight',
      byWeight.map((r) => r.id),
    )
    const byMade = [...rows].sort((a, b) => a.madeAt.getTime() - b.madeAt.getTime() || a.id - b.id)
    await walk(
      'made_at',
      byMade.map((r) => r.id),
    )
    // seen_at is nullable: nulls sort last ascending, and a null key value is a shape of its own.
    const bySeen = [...rows].sort(
      (a, b) =>
        (a.seenAt === null ? 1 : 0) - (b.seenAt === null ? 1 : 0) ||
        (a.seenAt?.getTime() ?? 0) - (b.seenAt?.getTime() ?? 0) ||
        a.id - b.id,
    )
    await walk(
      'seen_at',
      bySeen.map((r) => r.id),
    )
  })

  it('concurrent requests of one shape with different values each get their own rows', async () => {
    const requests = rows.map((row) => list(`filter[id]=${row.id}&filter[color]=${row.color}`))
    const more = COLORS.map((c) => list(`filter[color]=${c}&filter[id][gte]=1&per_page=100`))
    const pages = await Promise.all(requests)
    expect(pages.map(ids)).toEqual(rows.map((row) => [row.id]))
    const byColor = await Promise.all(more)
    expect(byColor.map(ids)).toEqual(COLORS.map((c) => expectIds((r) => r.color === c)))
  })

  it('holds at most maxPreparedShapes shapes; others are built per request, rightly', async () => {
    // The bound is per table and database: the earlier tests' shapes count towards it.
    const before = preparedShapeCount(db, gadgets)
    const bounded = defineListQuery(table(), { limits: { maxPreparedShapes: before + 2 } })
    // Four shapes, each asked twice with other values (`fields=` makes them new ones).
    const queries: Array<[string, (r: Gadget) => boolean]> = [
      ['filter[color]=red', (r) => r.color === 'red'],
      ['filter[active]=true', (r) => r.active],
      ['filter[weight][lt]=1', (r) => r.weight < 1],
      ['filter[id][in]=2,4', (r) => r.id === 2 || r.id === 4],
      ['filter[color]=green', (r) => r.color === 'green'],
      ['filter[active]=false', (r) => !r.active],
      ['filter[weight][lt]=2', (r) => r.weight < 2],
      ['filter[id][in]=3,5', (r) => r.id === 3 || r.id === 5],
    ]
    for (let round = 0; round < 2; round++) {
      for (const [query, predicate] of queries) {
        const page = await list(`${query}&fields=id,name&per_page=100`, bounded)
        expect(ids(page), query).toEqual(expectIds(predicate))
      }
    }
    expect(preparedShapeCount(db, bounded)).toBe(before + 2)
    expect(() => defineListQuery(table(), { limits: { maxPreparedShapes: -1 } })).toThrow(TypeError)
  })

  it('definitions of one table share shapes; their searches never mix', async () => {
    // crud_list lists through a copy of its definition per call: the copy finds the shapes.
    await list('filter[color]=red&per_page=100')
    const before = preparedShapeCount(db, gadgets)
    const copy = { ...gadgets, relations: new Map(gadgets.relations) }
    const page = await list('filter[color]=blue&per_page=100', copy)
    expect(ids(page)).toEqual(expectIds((r) => r.color === 'blue'))
    expect(preparedShapeCount(db, gadgets)).toBe(before)
    // The same request searches other columns through another definition.
    const byTenant = defineListQuery(table(), { search: ['tenant'] })
    for (const term of ['even', 'odd']) {
      const byName = await list(`search=${term}&per_page=100`)
      const tenants = await list(`search=${term}&per_page=100`, byTenant)
      expect(ids(byName)).toEqual([])
      expect(ids(tenants)).toEqual(expectIds((r) => r.tenant === term))
    }
  })

  it('a scoped list (a tenant) is built per request with its own values', async () => {
    const before = preparedShapeCount(db, gadgets)
    const scope = (tenant: string) => ({
      where: eq(table().tenant, tenant),
      key: `tenant:${tenant}`,
    })
    for (const tenant of ['even', 'odd', 'even']) {
      const page = await list('filter[color]=red&fields=id,color&per_page=100', gadgets, {
        scope: scope(tenant),
      })
      expect(ids(page)).toEqual(expectIds((r) => r.color === 'red' && r.tenant === tenant))
      expect(page.meta.total).toBe(
        expectIds((r) => r.color === 'red' && r.tenant === tenant).length,
      )
    }
    expect(preparedShapeCount(db, gadgets)).toBe(before)
  })

  it('a prepared page decodes every column as Drizzle itself does', async () => {
    // The resource hands the decoded row through: Dates, bigints, numerics, enums, uuids, nulls.
    const decoded = defineListQuery(table(), { resource: (row) => row })
    // biome-ignore lint/suspicious/noExplicitAny: one select for both dialects' tables
    const expected = await (db as any).select().from(table()).orderBy(table().id)
    for (const query of ['per_page=100', 'per_page=100', 'sort=-weight&per_page=100']) {
      const page = await list(query, decoded)
      const byId = [...page.data].sort((a, b) => Number(a.id) - Number(b.id))
      expect(byId, query).toEqual(expected)
    }
    // Sparse fields: only the columns asked for, decoded the same way before they are written.
    const sparse = await list('fields=id,made_at&per_page=100', decoded)
    expect(sparse.data[0]).toEqual({ id: 1, made_at: expected[0].madeAt.toISOString() })
  })

  it('includes by text and uuid keys through one prepared statement, each page its own records', async () => {
    const makers = () => (postgres ? pgMakers : sqliteMakers)
    const withMaker = defineListQuery(table(), {
      include: { maker: belongsTo(makers(), table().ref, makers().id) },
    })
    const withGadgets = defineListQuery(makers(), {
      include: { gadgets: hasMany(table(), table().ref, makers().id, { limit: 2 }) },
    })
    // Pages of 1, 2 and 5 records: a different number of keys, the same statement.
    for (const query of ['per_page=1&page=2', 'per_page=2&page=1', 'per_page=5&page=3']) {
      const page = await list(`include=maker&${query}`, withMaker)
      expect(page.data.length, query).toBeGreaterThan(0)
      for (const record of page.data) {
        const row = rows.find((r) => r.id === record.id)!
        expect(record.maker, query).toEqual({ id: row.ref, name: `Maker ${rows.indexOf(row)}` })
      }
    }
    for (const query of ['per_page=1&page=3', 'per_page=3']) {
      const page = (await runListQuery(withGadgets, `/makers?include=gadgets&${query}`, {
        db,
        counts,
        caller: { scopes: ['*'] },
      })) as ListEnvelope
      for (const maker of page.data) {
        const expected = rows.filter((r) => r.ref === maker.id).slice(0, 2)
        const gadgetIds = (maker.gadgets as Array<{ id: number }>).map((gadget) => gadget.id)
        expect(gadgetIds, query).toEqual(expected.map((r) => r.id))
      }
    }
  })

  it('count=estimated with a filter binds the same values (Postgres planner estimate)', async () => {
    for (const value of ['red', 'green']) {
      const page = await list(`filter[color]=${value}&count=estimated&page=2&per_page=2`)
      expect(ids(page)).toEqual(expectIds((r) => r.color === value).slice(2, 4))
      expect(page.meta.total).toBe(expectIds((r) => r.color === value).length)
    }
  })
})
