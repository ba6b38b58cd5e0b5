import Database from 'better-sqlite3'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { describe, expect, it } from 'vitest'
import { classifyDatabaseError } from '../../src/db/index.ts'

/** The error a statement raises on a real SQLite database, as drizzle wraps it. */
function failureOf(statement: string): unknown {
  const sqlite = new Database(':memory:')
  sqlite.pragma('foreign_keys = ON')
  sqlite.exec(`
    create table authors (id integer primary key, email text not null unique);
    create table posts (
      id integer primary key,
      author_id integer references authors(id) on delete restrict,
      words integer check (words >= 0)
    );
    insert into authors (id, email) values (1, 'a@example.com');
    insert into posts (id, author_id, words) values (1, 1, 3);
  `)
  try {
    drizzle(sqlite).run(sql.raw(statement))
    return undefined
  } catch (error) {
    return error
  } finally {
    sqlite.close()
  }
}

describe('classifyDatabaseError: one reading of constraint and data errors', () => {
  it.each([
    ["insert into authors (id, email) values (2, 'a@example.com')", 'unique', 'email'],
    ["insert into authors (id, email) values (1, 'b@example.com')", 'unique', 'id'],
    ['insert into authors (id, email) values (2, null)', 'not-null', 'email'],
    ['insert into posts (id, author_id, words) values (2, 1, -1)', 'check', undefined],
    ['insert into posts (id, author_id, words) values (2, 99, 1)', 'foreign-key', undefined],
    ['delete from authors where id = 1', 'restrict', undefined],
  ])('%s → %s', (statement, kind, field) => {
    const classified = classifyDatabaseError(failureOf(statement))
    expect(classified?.kind).toBe(kind)
    expect(classified?.field).toBe(field)
    expect(classified?.code).toMatch(/^SQLITE_CONSTRAINT/)
  })

  it('reads Postgres SQLSTATEs, the blamed key and a delete blocked by a reference', () => {
    const wrapped = (cause: object) => Object.assign(new Error('Failed query: …'), { cause })
    expect(
      classifyDatabaseError(
        wrapped({ code: '23505', detail: 'Key (email)=(a@example.com) already exists.' }),
      ),
    ).toMatchObject({ kind: 'unique', field: 'email' })
    expect(
      classifyDatabaseError(
        wrapped({
          code: '23503',
          detail: 'Key (id)=(1) is still referenced from table "posts".',
        }),
      ),
    ).toMatchObject({ kind: 'foreign-key', stillReferenced: true })
    expect(classifyDatabaseError(wrapped({ code: '22001', column: 'title' }))).toMatchObject({
      kind: 'out-of-range',
      column: 'title',
    })
    expect(classifyDatabaseError(wrapped({ code: '22012' }))?.kind).toBe('data')
    expect(classifyDatabaseError(wrapped({ code: '23P01' }))?.kind).toBe('constraint')
  })

  it('is no data error for a failure of the database itself', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    })
    expect(classifyDatabaseError(refused)).toBeUndefined()
    expect(classifyDatabaseError(Object.assign(new Error('x'), { code: '57P01' }))).toBeUndefined()
    expect(classifyDatabaseError(new Error('no code'))).toBeUndefined()
    expect(classifyDatabaseError(undefined)).toBeUndefined()
  })
})
