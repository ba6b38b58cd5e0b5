import pg from 'pg'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { realtimeTriggerSql } from '../../../src/api/realtime/trigger-sql.ts'
import { createSharedState, type SharedState } from '../../../src/core/index.ts'
import { STATEMENT_BREAKPOINT } from '../../../src/db/migrate.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { execSql } from '../support.ts'
import { type NotesApp, notesApp, notesDatabase } from './notes-app.ts'
import { EventReader, type ReadEvent } from './sse.ts'

type Json = Record<string, unknown>

const TRIGGER = realtimeTriggerSql([
  { resource: 'notes', table: 'notes', key: 'id', deletedAt: 'deleted_at' },
])

/**
 * Two instances of one app sharing Redis, each listening for the realtime trigger; the writes
 * made "outside kiln" are plain SQL on a connection of their own, as psql would make them.
 */
describeEachDatabase(
  'realtime: writes made outside kiln, told by the trigger',
  (backend) => {
    let test: TestDatabase
    let redis: TestRedis
    const shared: SharedState[] = []
    let a: NotesApp
    let b: NotesApp
    let outside: { query(text: string): Promise<{ rows: Json[] }>; end(): Promise<void> }

    beforeAll(async () => {
      test = await notesDatabase(backend)
      for (const statement of TRIGGER.split(STATEMENT_BREAKPOINT)) {
        await execSql(test.database, statement)
      }
      redis = await createTestRedis()
      const prefix = `${redis.prefix}:realtime:`
      for (let i = 0; i < 2; i++) {
        shared.push(await createSharedState({ redisUrl: redisUrl!, prefix: redis.prefix }))
      }
      const options = { outsideWrites: test.database, prefix }
      a = await notesApp(test.database, { ...options, shared: shared[0] })
      b = await notesApp(test.database, { ...options, shared: shared[1] })
      outside = await sqlSession(test)
      await vi.waitFor(() => {
        expect(a.realtime.status().outsideWrites).toBe('live')
        expect(b.realtime.status().outsideWrites).toBe('live')
      })
    })
    afterAll(async () => {
      await outside?.end()
      await a?.close()
      await b?.close()
      for (const state of shared) await state.close()
      await redis?.cleanup()
      await test?.cleanup()
    })

    const stream = async (api: NotesApp, headers: Record<string, string> = api.writer) => {
      const response = await api.app.request('/api/v1/notes/events', { headers })
      expect(response.status).toBe(200)
      return new EventReader(response)
    }
    const insert = async (title: string, owner = 'public') => {
      const { rows } = await outside.query(
        `INSERT INTO notes (title, owner, password_digest) VALUES ('${title}', '${owner}', 'secret') RETURNING id`,
      )
      return rows[0]!.id as number
    }
    const summary = (e: { id?: string; event: string; data: unknown }) => {
      const data = e.data as { id: number; data?: Json }
      return [e.event, data.id, data.data?.title]
    }

    it('a write in plain SQL reaches the streams, once across instances, as a GET reads it', async () => {
      const onA = await stream(a)
      const onB = await stream(b)
      const id = await insert('typed by hand')
      const seen = await take(onB, 1)
      await outside.query(`UPDATE notes SET title = 'edited by hand' WHERE id = ${id}`)
      seen.push(...(await take(onB, 1)))
      expect(seen.map(summary)).toEqual([
        ['created', id, 'typed by hand'],
        ['updated', id, 'edited by hand'],
      ])
      // No field a GET would not give: the credential column stays out.
      expect((seen[0]!.data as { data: Json }).data).not.toHaveProperty('password_digest')
      // Numbered once: consecutive ids, the same on both instances (no second publish).
      expect(Number(seen[1]!.id)).toBe(Number(seen[0]!.id) + 1)
      const onOther = await take(onA, 2)
      expect(onOther.map((e) => [e.id, e.event])).toEqual(seen.map((e) => [e.id, e.event]))
      // Soft delete and restore by hand are told as kiln's own would be. Each write waits for its
      // event: a stream reads the record as it is when it reads it.
      const told: ReadEvent[] = []
      for (const set of ['deleted_at = now()', 'deleted_at = NULL']) {
        await outside.query(`UPDATE notes SET ${set} WHERE id = ${id}`)
        told.push(...(await take(onA, 1)))
      }
      await outside.query(`DELETE FROM notes WHERE id = ${id}`)
      told.push(...(await take(onA, 1)))
      expect(told.map(summary)).toEqual([
        ['deleted', id, undefined],
        ['restored', id, 'edited by hand'],
        ['deleted', id, undefined],
      ])
      await onA.cancel()
      await onB.cancel()
    })

    it('respects the policy: a row the key cannot read is not sent to it', async () => {
      const reader = await a.key(['notes:read'])
      const events = await stream(a, { authorization: reader.authorization })
      const hidden = await insert('private', 'someone')
      const shown = await insert('public one')
      const [first] = await take(events, 1)
      await events.cancel()
      expect(summary(first!)).toEqual(['created', shown, 'public one'])
      expect(hidden).toBeLessThan(shown)
    })

    it('a write kiln makes is told once: by the trigger, not by kiln too', async () => {
      const events = await stream(b)
      const response = await a.request('POST', '/api/v1/notes', { title: 'through kiln' })
      const made = ((await response.json()) as { data: Json }).data
      const seen = await take(events, 1)
      await a.request('DELETE', `/api/v1/notes/${made.id}`)
      seen.push(...(await take(events, 1)))
      const after = await insert('sentinel')
      seen.push(...(await take(events, 1)))
      await events.cancel()
      expect(seen.map(summary)).toEqual([
        ['created', made.id, 'through kiln'],
        ['deleted', made.id, undefined],
        ['created', after, 'sentinel'],
      ])
      expect(Number(seen[2]!.id)).toBe(Number(seen[0]!.id) + 2)
    })
  },
  { only: ['postgres'] },
)

/** The next `n` events, or a failure naming those that came within 15 s. */
async function take(reader: EventReader, n: number): Promise<ReadEvent[]> {
  const got: ReadEvent[] = []
  const reading = (async () => {
    while (got.length < n) {
      const event = await reader.next()
      if (!event) break
      got.push(event)
    }
  })()
  const late = new Promise((done) => setTimeout(done, 15_000).unref())
  await Promise.race([reading, late])
  if (got.length < n) throw new Error(`${n} events expected, came: ${JSON.stringify(got)}`)
  return got
}

/** A connection of its own to the server (its direct URL behind the pooler). */
async function sqlSession(test: TestDatabase) {
  const client = new pg.Client({ connectionString: test.directUrl ?? test.url })
  await client.connect()
  return client
}

describeEachDatabase(
  'realtime: writes made outside kiln, in process',
  (backend) => {
    let test: TestDatabase
    let api: NotesApp

    beforeAll(async () => {
      test = await notesDatabase(backend)
      for (const statement of TRIGGER.split(STATEMENT_BREAKPOINT)) {
        await execSql(test.database, statement)
      }
      api = await notesApp(test.database, { outsideWrites: test.database })
      await vi.waitFor(() => expect(api.realtime.status().outsideWrites).toBe('live'))
    })
    afterAll(async () => {
      await api?.close()
      await test?.cleanup()
    })

    it('SQL run on the embedded database reaches the stream, a kiln write once', async () => {
      const response = await api.app.request('/api/v1/notes/events', { headers: api.writer })
      const events = new EventReader(response)
      await execSql(test.database, `INSERT INTO notes (title) VALUES ('by hand')`)
      const seen = await take(events, 1)
      await api.request('POST', '/api/v1/notes', { title: 'through kiln' })
      seen.push(...(await take(events, 1)))
      await execSql(test.database, `INSERT INTO notes (title) VALUES ('sentinel')`)
      seen.push(...(await take(events, 1)))
      await events.cancel()
      expect(seen.map((e) => [e.id, e.event, (e.data as { data: Json }).data.title])).toEqual([
        ['1', 'created', 'by hand'],
        ['2', 'created', 'through kiln'],
        ['3', 'created', 'sentinel'],
      ])
    })
  },
  { only: ['pglite'] },
)
