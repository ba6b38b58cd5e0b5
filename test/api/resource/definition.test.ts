import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createRecordCounter,
  defineResource,
  resourceOperations,
  routeScopes,
} from '../../../src/api/index.ts'
import { readPolicyOf, writePolicyOf } from '../../../src/db/models/policy.ts'

const authors = sqliteTable('authors', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
})
const notes = sqliteTable('notes', {
  id: integer('id').primaryKey(),
  title: text('title').notNull(),
  authorId: integer('author_id').references(() => authors.id),
  deletedAt: integer('deleted_at', { mode: 'timestamp' }),
})
const CreateNote = z.strictObject({ title: z.string() })
const UpdateNote = CreateNote.partial()
const call = {
  request: new Request('http://x/api/v1/notes', { method: 'POST' }),
  caller: undefined,
}

describe('defineResource', () => {
  it('declares the read and write policies every surface reads, with its scopes', () => {
    const resource = defineResource(notes, {
      requests: { create: CreateNote, update: UpdateNote },
      scopes: { read: 'library:read', destroy: 'library:admin' },
    })
    expect(readPolicyOf(notes)?.readScope).toBe('library:read')
    expect(writePolicyOf(notes)).toEqual({ create: CreateNote, update: UpdateNote })
    expect(resource.scopes).toMatchObject({
      index: 'library:read',
      show: 'library:read',
      store: 'notes:write',
      destroy: 'library:admin',
    })
    const kiln = resourceOperations(resource, { db: {} as never, counts: createRecordCounter() })
    expect(routeScopes(kiln.scope.destroy)).toEqual(['library:admin'])
    expect(routeScopes(kiln.scope.aggregate)).toEqual(['library:read'])
  })

  it('soft delete follows a deleted_at column, and restore exists only with it', () => {
    expect(defineResource(notes).softDelete?.column).toBe(notes.deletedAt)
    expect(defineResource(notes).operations.has('restore')).toBe(true)
    expect(defineResource(notes, { softDelete: false }).operations.has('restore')).toBe(false)
    expect(() => defineResource(authors, { softDelete: true })).toThrow(/deleted_at/)
  })

  it('an operation it does not offer answers 405 and touches nothing', async () => {
    const resource = defineResource(notes, { operations: ['index', 'show'] })
    const kiln = resourceOperations(resource, { db: {} as never, counts: createRecordCounter() })
    await expect(kiln.store(call)).rejects.toMatchObject({ status: 405 })
    await expect(kiln.destroyMany(call)).rejects.toMatchObject({ status: 405 })
    expect(() => defineResource(notes, { operations: ['publish' as never] })).toThrow(/publish/)
  })

  it('relations come from the foreign keys to every resource, those defined later too', () => {
    const writers = sqliteTable('writers', { id: integer('id').primaryKey() })
    const drafts = sqliteTable('drafts', {
      id: integer('id').primaryKey(),
      writerId: integer('writer_id').references(() => writers.id),
    })
    const writersResource = defineResource(writers)
    expect(writersResource.relations.has('drafts')).toBe(false)
    const draftsResource = defineResource(drafts)
    expect(writersResource.relations.get('drafts')?.kind).toBe('has-many')
    expect(draftsResource.relations.get('writer')?.kind).toBe('belongs-to')
    const declared = defineResource(writers, { relations: 'declared' })
    expect(declared.relations.size).toBe(0)
  })
})
