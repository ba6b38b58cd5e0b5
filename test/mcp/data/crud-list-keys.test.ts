import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type SQL, sql } from 'drizzle-orm'
import {
  integer as pgInteger,
  primaryKey as pgPrimaryKey,
  pgTable,
  text as pgText,
  serial,
} from 'drizzle-orm/pg-core'
import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok } from '../support/client.ts'

type Row = Record<string, unknown>
interface Page {
  records: Row[]
  total: number | null
  page: number | null
  next_cursor?: string | null
}

// teams ← memberships (composite primary key team_id, user_id); events has no primary key.
const pgTeams = pgTable('teams', { id: serial('id').primaryKey(), name: pgText('name').notNull() })
const pgSchema = {
  teams: pgTeams,
  memberships: pgTable(
    'memberships',
    {
      teamId: pgInteger('team_id')
        .notNull()
        .references(() => pgTeams.id),
      userId: pgInteger('user_id').notNull(),
      role: pgText('role').notNull(),
    },
    (t) => [pgPrimaryKey({ columns: [t.teamId, t.userId] })],
  ),
  events: pgTable('events', {
    kind: pgText('kind').notNull(),
    at: pgInteger('at').notNull(),
    note: pgText('note'),
  }),
}
const sqliteTeams = sqliteTable('teams', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
})
const sqliteSchema = {
  teams: sqliteTeams,
  memberships: sqliteTable(
    'memberships',
    {
      teamId: integer('team_id')
        .notNull()
        .references(() => sqliteTeams.id),
      userId: integer('user_id').notNull(),
      role: text('role').notNull(),
    },
    (t) => [primaryKey({ columns: [t.teamId, t.userId] })],
  ),
  events: sqliteTable('events', {
    kind: text('kind').notNull(),
    at: integer('at').notNull(),
    note: text('note'),
  }),
}

const DDL = (serialType: string) => [
  `CREATE TABLE teams (id ${serialType}, name text NOT NULL)`,
  `CREATE TABLE memberships (team_id integer NOT NULL REFERENCES teams (id),
     user_id integer NOT NULL, role text NOT NULL, PRIMARY KEY (team_id, user_id))`,
  'CREATE TABLE events (kind text NOT NULL, at integer NOT NULL, note text)',
]

// Inserted out of key order, so an order that only followed the table's storage would show.
const MEMBERSHIPS: Array<[number, number, string]> = [
  [2, 3, 'member'],
  [1, 4, 'admin'],
  [3, 1, 'member'],
  [1, 1, 'member'],
  [2, 1, 'admin'],
  [3, 4, 'admin'],
  [1, 2, 'member'],
  [2, 2, 'member'],
  [3, 2, 'member'],
  [1, 3, 'admin'],
  [2, 4, 'member'],
  [3, 3, 'member'],
]
// Two rows are equal in every column: a table without a key may hold duplicates.
const EVENTS: Array<[string, number, string | null]> = [
  ['view', 2, null],
  ['click', 1, 'a'],
  ['click', 3, 'b'],
  ['view', 1, 'c'],
  ['click', 1, 'a'],
  ['view', 2, 'a'],
  ['click', 2, null],
]

const byKeys =
  (...keys: Array<[string, 'asc' | 'desc']>) =>
  (a: Row, b: Row) => {
    for (const [key, direction] of keys) {
      const [x, y] = [a[key], b[key]]
      if (x === y) continue
      // Nulls sort as the largest values (kiln's rule on both databases).
      const order = x === null ? 1 : y === null ? -1 : (x as number) < (y as number) ? -1 : 1
      return direction === 'asc' ? order : -order
    }
    return 0
  }

describeEachDatabase('crud_list on models without a single-column primary key', (backend) => {
  let test: TestDatabase
  let database: Database
  let client: Client

  const run = async (statement: SQL) => {
    if (database.dialect === 'postgres') await database.db.execute(statement)
    else database.db.run(statement)
  }
  const list = (model: string, args: Record<string, unknown> = {}) =>
    ok<Page>(client, 'crud_list', { model, ...args })
  /** Every page of a list, by page number. */
  const allPages = async (model: string, args: Record<string, unknown>, perPage: number) => {
    const seen: Row[] = []
    for (let page = 1; ; page++) {
      const result = await list(model, { ...args, page, per_page: perPage })
      seen.push(...result.records)
      if (result.records.length < perPage) return seen
    }
  }

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    const postgres = database.dialect === 'postgres'
    for (const statement of DDL(postgres ? 'serial PRIMARY KEY' : 'integer PRIMARY KEY'))
      await run(sql.raw(statement))
    for (const name of ['Red', 'Green', 'Blue'])
      await run(sql`INSERT INTO teams (name) VALUES (${name})`)
    for (const [team, user, role] of MEMBERSHIPS)
      await run(sql`INSERT INTO memberships VALUES (${team}, ${user}, ${role})`)
    for (const [kind, at, note] of EVENTS)
      await run(sql`INSERT INTO events VALUES (${kind}, ${at}, ${note})`)
    const models = createModelRegistry(postgres ? pgSchema : sqliteSchema, database.dialect)
    const tools = createDataTools({
      database,
      models,
      access: { unlisted: 'read' },
      logger: silentLogger(),
    })
    client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  })
  afterAll(async () => {
    await client?.close()
    await test?.cleanup()
  })

  const memberships = MEMBERSHIPS.map(([team_id, user_id, role]) => ({ team_id, user_id, role }))
  const events = EVENTS.map(([kind, at, note]) => ({ kind, at, note }))

  it('lists a composite-key model in key order, the key breaking ties of any sort', async () => {
    const all = await list('memberships', { per_page: 100 })
    expect(all.total).toBe(12)
    expect(all.records).toEqual(
      [...memberships].sort(byKeys(['team_id', 'asc'], ['user_id', 'asc'])),
    )
    const byRole = [...memberships].sort(
      byKeys(['role', 'asc'], ['team_id', 'asc'], ['user_id', 'asc']),
    )
    expect((await list('memberships', { sort: 'role', per_page: 100 })).records).toEqual(byRole)
    expect(await allPages('memberships', { sort: 'role' }, 5)).toEqual(byRole)
    const descending = [...memberships].sort(
      byKeys(['role', 'desc'], ['team_id', 'desc'], ['user_id', 'desc']),
    )
    expect(await allPages('memberships', { sort: '-role' }, 5)).toEqual(descending)
    const filtered = await list('memberships', { filters: { team_id: 2 }, sort: '-user_id' })
    expect(filtered.records.map((r) => r.user_id)).toEqual([4, 3, 2, 1])
  })

  it('pages a composite-key model by cursor, forwards and back', async () => {
    const seen: Row[] = []
    let cursor: string | null | undefined = ''
    let last: Page | undefined
    while (typeof cursor === 'string') {
      last = await list('memberships', { sort: 'role', cursor, per_page: 5 })
      seen.push(...last.records)
      cursor = last.next_cursor
    }
    expect(seen).toEqual((await list('memberships', { sort: 'role', per_page: 100 })).records)
    const back = await list('memberships', {
      sort: 'role',
      cursor: (last as Page & { prev_cursor: string }).prev_cursor,
      per_page: 5,
    })
    expect(back.records).toEqual(seen.slice(5, 10))
  })

  it('includes has-many records of a composite-key model, in its key order', async () => {
    const teams = await list('teams', { include: ['memberships'] })
    expect(teams.records).toHaveLength(3)
    for (const team of teams.records) {
      const expected = memberships
        .filter((m) => m.team_id === team.id)
        .sort(byKeys(['team_id', 'asc'], ['user_id', 'asc']))
      expect(team.memberships).toEqual(expected)
    }
  })

  it('lists a model without a primary key in the order of all its fields, duplicates included', async () => {
    const ordered = [...events].sort(byKeys(['kind', 'asc'], ['at', 'asc'], ['note', 'asc']))
    const all = await list('events', { per_page: 100 })
    expect(all).toMatchObject({ total: 7, page: 1 })
    expect(all.records).toEqual(ordered)
    expect(await allPages('events', {}, 2)).toEqual(ordered)
    const byAt = [...events].sort(byKeys(['at', 'desc'], ['kind', 'desc'], ['note', 'desc']))
    expect(await allPages('events', { sort: '-at' }, 3)).toEqual(byAt)
    expect((await list('events', { filters: { note: null } })).total).toBe(2)
  })

  it('refuses cursors on a model without a primary key, naming why', async () => {
    const refused = await call(client, 'crud_list', { model: 'events', cursor: '' })
    expect(refused.isError).toBe(true)
    expect(refused.text).toMatch(/cursor: needs a primary key; this resource pages by page number/)
  })
})
