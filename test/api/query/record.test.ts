import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { expect, it } from 'vitest'
import { defineListQuery } from '../../../src/api/index.ts'

const members = sqliteTable('record_members', {
  id: integer('id').primaryKey(),
  email: text('email').notNull(),
  name: text('name').notNull(),
  nickname: text('nickname'),
  ssn: text('ssn'),
})
type Member = typeof members.$inferSelect
const row: Member = { id: 1, email: 'a@b.c', name: 'Ada', nickname: null, ssn: '123' }

/** A resource as a developer writes one: every column by name, one computed value. */
const toMember = (member: Member) => ({
  id: member.id,
  email: member.email,
  name: member.name,
  nickname: member.nickname,
  ssn: member.ssn,
  initials: member.name.slice(0, 1),
})

it('record: the resource kept to fields; computed values pass', () => {
  const query = defineListQuery(members, {
    fields: ['id', 'name', 'nickname'],
    resource: toMember,
  })
  expect(query.record(row)).toEqual({ id: 1, name: 'Ada', nickname: null, initials: 'A' })
  // A bound function, as rows.map(query.record) calls it.
  expect([row].map(query.record)).toEqual([query.record(row)])
})

it('record: a column the app marks sensitive is withheld too, by wire or property name', () => {
  const query = defineListQuery(members, { sensitive: ['ssn'], resource: toMember })
  expect(query.record(row)).not.toHaveProperty('ssn')
  expect(query.record(row)).toHaveProperty('email')
  const byProperty = defineListQuery(members, {
    fields: ['id', 'name'],
    resource: (member) => ({ id: member.id, name: member.name, nickname: member.nickname }),
  })
  expect(byProperty.record(row)).toEqual({ id: 1, name: 'Ada' })
})

it('record: a resource that shows no withheld column is returned as it made it', () => {
  const made = { id: 1, name: 'Ada' }
  const query = defineListQuery(members, { fields: ['id', 'name'], resource: () => made })
  expect(query.record(row)).toBe(made)
})

it('record: without a resource, the fields column by column', () => {
  const query = defineListQuery(members, { fields: ['id', 'email'] })
  expect(query.record(row)).toEqual({ id: 1, email: 'a@b.c' })
})
