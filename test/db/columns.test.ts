import { getTableColumns, type Table } from 'drizzle-orm'
import {
  bigserial,
  char,
  customType,
  date,
  doublePrecision,
  interval,
  json,
  jsonb,
  bigint as pgBigint,
  boolean as pgBoolean,
  pgEnum,
  integer as pgInteger,
  numeric as pgNumeric,
  real as pgReal,
  pgTable,
  text as pgText,
  serial,
  smallint,
  smallserial,
  time,
  timestamp,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { blob, integer, numeric, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { describe, expect, it } from 'vitest'
import type { Dialect } from '../../src/db/database.ts'
import {
  type ColumnClass,
  classifyColumn,
  describeColumn,
  UUID_PATTERN,
} from '../../src/db/models/columns.ts'

function classes(table: Table, dialect: Dialect): Record<string, ColumnClass> {
  return Object.fromEntries(
    Object.entries(getTableColumns(table)).map(([key, column]) => [
      key,
      classifyColumn(
        describeColumn(key, column, dialect, { inPrimaryKey: false, singlePrimaryKey: true }),
        dialect,
      ),
    ]),
  )
}

const citext = customType<{ data: string }>({ dataType: () => 'citext' })
const jsonbCustom = customType<{ data: unknown }>({ dataType: () => 'jsonb' })
const mood = pgEnum('mood', ['happy', 'sad'])
// An enum whose name reads like another type: the values decide, never the name.
const integerStatus = pgEnum('integer_status', ['on', 'off'])

describe('classifyColumn on PostgreSQL columns', () => {
  const table = pgTable('everything', {
    id: uuid('id').primaryKey().defaultRandom(),
    serialId: serial('serial_id'),
    small: smallint('small'),
    smallSerial: smallserial('small_serial'),
    count: pgInteger('count').notNull(),
    big53: pgBigint('big53', { mode: 'number' }),
    big64: pgBigint('big64', { mode: 'bigint' }),
    bigSerial: bigserial('big_serial', { mode: 'number' }),
    price: pgNumeric('price', { precision: 10, scale: 2 }),
    whole: pgNumeric('whole', { precision: 8 }),
    plainNumeric: pgNumeric('plain_numeric'),
    ratio: pgReal('ratio'),
    score: doublePrecision('score'),
    active: pgBoolean('active').notNull(),
    title: varchar('title', { length: 200 }),
    code: char('code', { length: 2 }),
    body: pgText('body'),
    nick: citext('nick'),
    mood: mood('mood'),
    status: integerStatus('status'),
    born: date('born'),
    bornAt: date('born_at', { mode: 'date' }),
    at: time('at'),
    atZoned: time('at_zoned', { withTimezone: true }),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'string', precision: 3 }),
    payload: json('payload'),
    document: jsonb('document'),
    custom: jsonbCustom('custom'),
    tags: pgText('tags').array(),
    prices: pgNumeric('prices', { precision: 10, scale: 2 }).array(),
    span: interval('span'),
    'weird name': pgText('weird name'),
  })
  const c = classes(table, 'postgres')

  it('reads integers with their width, bigints, numerics and floats', () => {
    expect(c.serialId).toEqual({ kind: 'integer', nullable: false, bits: 32 })
    expect(c.small).toEqual({ kind: 'integer', nullable: true, bits: 16 })
    expect(c.smallSerial).toEqual({ kind: 'integer', nullable: false, bits: 16 })
    expect(c.count).toEqual({ kind: 'integer', nullable: false, bits: 32 })
    expect(c.big53).toEqual({ kind: 'integer', nullable: true, bits: 64 })
    expect(c.big64).toEqual({ kind: 'bigint', nullable: true, bits: 64 })
    expect(c.bigSerial).toEqual({ kind: 'integer', nullable: false, bits: 64 })
    expect(c.price).toEqual({ kind: 'numeric', nullable: true, precision: 10, scale: 2 })
    expect(c.whole).toEqual({ kind: 'numeric', nullable: true, precision: 8, scale: 0 })
    expect(c.plainNumeric).toEqual({ kind: 'numeric', nullable: true })
    expect(c.ratio).toEqual({ kind: 'float', nullable: true, bits: 32 })
    expect(c.score).toEqual({ kind: 'float', nullable: true, bits: 64 })
  })

  it('reads text, uuid keys and enums, whatever the enum is called', () => {
    expect(c.id).toEqual({ kind: 'uuid', nullable: false })
    expect(c.active).toEqual({ kind: 'boolean', nullable: false })
    expect(c.title).toEqual({ kind: 'text', nullable: true })
    expect(c.code).toEqual({ kind: 'text', nullable: true })
    expect(c.body).toEqual({ kind: 'text', nullable: true })
    expect(c['weird name']).toEqual({ kind: 'text', nullable: true })
    // A custom type is not something kiln can check.
    expect(c.nick).toEqual({ kind: 'other', nullable: true })
    expect(c.mood).toEqual({ kind: 'enum', nullable: true })
    expect(c.status).toEqual({ kind: 'enum', nullable: true })
  })

  it('reads dates, times and timestamps in either mode, with their time zone', () => {
    expect(c.born).toEqual({ kind: 'date', nullable: true })
    expect(c.bornAt).toEqual({ kind: 'date', nullable: true })
    expect(c.at).toEqual({ kind: 'time', nullable: true, withTimeZone: false })
    expect(c.atZoned).toEqual({ kind: 'time', nullable: true, withTimeZone: true })
    expect(c.createdAt).toEqual({ kind: 'timestamp', nullable: false, withTimeZone: false })
    expect(c.updatedAt).toEqual({ kind: 'timestamp', nullable: true, withTimeZone: true })
  })

  it('reads JSON, arrays with their elements, bytes and the rest', () => {
    expect(c.payload).toEqual({ kind: 'json', nullable: true, textual: true })
    expect(c.document).toEqual({ kind: 'json', nullable: true, textual: true })
    expect(c.custom).toEqual({ kind: 'json', nullable: true, textual: true })
    expect(c.tags).toEqual({
      kind: 'array',
      nullable: true,
      element: { kind: 'text', nullable: true },
    })
    // An array of numerics is an array, not a numeric.
    expect(c.prices).toEqual({
      kind: 'array',
      nullable: true,
      element: { kind: 'numeric', nullable: true, precision: 10, scale: 2 },
    })
    expect(c.span).toEqual({ kind: 'other', nullable: true })
  })
})

describe('classifyColumn on SQLite columns', () => {
  const table = sqliteTable('everything', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    count: integer('count').notNull(),
    big: blob('big', { mode: 'bigint' }),
    flag: integer('flag', { mode: 'boolean' }),
    at: integer('at', { mode: 'timestamp' }),
    price: numeric('price'),
    ratio: real('ratio'),
    name: text('name', { length: 40 }),
    kind: text('kind', { enum: ['a', 'b'] }),
    meta: text('meta', { mode: 'json' }),
    packed: blob('packed', { mode: 'json' }),
    raw: blob('raw', { mode: 'buffer' }),
  })
  const c = classes(table, 'sqlite')

  it('reads every integer as 64-bit and every real as a double', () => {
    expect(c.id).toEqual({ kind: 'integer', nullable: false, bits: 64 })
    expect(c.count).toEqual({ kind: 'integer', nullable: false, bits: 64 })
    expect(c.big).toEqual({ kind: 'bigint', nullable: true, bits: 64 })
    expect(c.ratio).toEqual({ kind: 'float', nullable: true, bits: 64 })
    expect(c.price).toEqual({ kind: 'numeric', nullable: true })
  })

  it('reads booleans and timestamps kept as integers, enums kept as text, JSON as text or blob', () => {
    expect(c.flag).toEqual({ kind: 'boolean', nullable: true })
    expect(c.at).toEqual({ kind: 'timestamp', nullable: true, withTimeZone: false })
    expect(c.name).toEqual({ kind: 'text', nullable: true })
    expect(c.kind).toEqual({ kind: 'enum', nullable: true })
    expect(c.meta).toEqual({ kind: 'json', nullable: true, textual: true })
    expect(c.packed).toEqual({ kind: 'json', nullable: true, textual: false })
    expect(c.raw).toEqual({ kind: 'bytes', nullable: true })
  })

  it('reads a Postgres integer as 32-bit without a dialect', () => {
    expect(classifyColumn({ sqlType: 'integer', dataType: 'integer' })).toEqual({
      kind: 'integer',
      nullable: false,
      bits: 32,
    })
    expect(classifyColumn({ sqlType: 'INT4', dataType: 'number', nullable: true })).toEqual({
      kind: 'integer',
      nullable: true,
      bits: 32,
    })
  })
})

describe('UUID_PATTERN', () => {
  it('takes a UUID in any case and nothing else', () => {
    expect(UUID_PATTERN.test('0b7f4c2e-6a1d-4e8b-9c3f-2d5e8a1b7c90')).toBe(true)
    expect(UUID_PATTERN.test('0B7F4C2E-6A1D-4E8B-9C3F-2D5E8A1B7C90')).toBe(true)
    expect(UUID_PATTERN.test('0b7f4c2e6a1d4e8b9c3f2d5e8a1b7c90')).toBe(false)
    expect(UUID_PATTERN.test('0b7f4c2e-6a1d-4e8b-9c3f-2d5e8a1b7c90x')).toBe(false)
  })
})
