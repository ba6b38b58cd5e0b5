import { boolean, integer, jsonb, json as pgJson, pgTable, serial, text } from 'drizzle-orm/pg-core'
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import type { Database } from '../../../src/db/database.ts'
import { execSql } from '../support.ts'

/**
 * Items with array and JSON columns, for the richer filters and the aggregates: on PostgreSQL
 * `text[]`, `integer[]`, `jsonb` and `json`; on SQLite the arrays and objects are JSON text.
 */
export const pgItems = pgTable('items', {
  id: serial('id').primaryKey(),
  title: text('title').notNull(),
  tags: text('tags').array().notNull(),
  scores: integer('scores').array(),
  meta: jsonb('meta').$type<Record<string, unknown>>(),
  extra: pgJson('extra'),
  published: boolean('published').notNull(),
  authorId: integer('author_id').notNull(),
  tokenCount: integer('token_count'),
  apiToken: text('api_token'),
})

export const sqliteItems = sqliteTable('items', {
  id: sqliteInteger('id').primaryKey({ autoIncrement: true }),
  title: sqliteText('title').notNull(),
  tags: sqliteText('tags', { mode: 'json' }).$type<string[]>().notNull(),
  scores: sqliteText('scores', { mode: 'json' }).$type<number[]>(),
  meta: sqliteText('meta', { mode: 'json' }).$type<Record<string, unknown>>(),
  extra: sqliteText('extra', { mode: 'json' }),
  published: sqliteInteger('published', { mode: 'boolean' }).notNull(),
  authorId: sqliteInteger('author_id').notNull(),
  tokenCount: sqliteInteger('token_count'),
  apiToken: sqliteText('api_token'),
})

export interface Item {
  id: number
  title: string
  tags: string[]
  scores: number[] | null
  meta: Record<string, unknown> | null
  published: boolean
  authorId: number
  tokenCount: number | null
}

const COLORS = ['red', 'green', 'blue', null] as const

/** 24 items: tags from a small set, a color (or none) and a size in `meta`, three authors. */
export const items: Item[] = Array.from({ length: 24 }, (_, i) => {
  const tags = ['power', 'kiln', 'clay', 'glaze'].filter((_, t) => (i >> t) % 2 === 1)
  const color = COLORS[i % 4]
  return {
    id: i + 1,
    title: `Item ${i}`,
    tags,
    scores: i % 5 === 0 ? null : [i % 3, 10 + (i % 4)],
    meta:
      i % 6 === 5
        ? null
        : {
            ...(color === null ? {} : { color }),
            size: { name: i % 2 === 0 ? 'small' : 'large' },
            featured: i % 3 === 0,
            ...(i % 7 === 0 ? { list: ['a', 'b'] } : {}),
          },
    published: i % 2 === 0,
    authorId: 1 + (i % 3),
    tokenCount: i % 8 === 7 ? null : i * 3,
  }
})

/** Creates the items table on `database` and fills it with `items`. */
export async function seedItems(database: Database): Promise<void> {
  const postgres = database.dialect === 'postgres'
  await execSql(
    database,
    postgres
      ? `create table items (id serial primary key, title text not null, tags text[] not null,
           scores integer[], meta jsonb, extra json, published boolean not null,
           author_id integer not null, token_count integer, api_token text)`
      : `create table items (id integer primary key autoincrement, title text not null,
           tags text not null, scores text, meta text, extra text, published integer not null, author_id integer not null,
           token_count integer, api_token text)`,
  )
  const rows = items.map(({ id: _, ...item }) => ({
    ...item,
    extra: item.meta,
    apiToken: 'secret',
  }))
  // biome-ignore lint/suspicious/noExplicitAny: one insert for both dialects' tables
  await (database.db as any).insert(postgres ? pgItems : sqliteItems).values(rows)
}
