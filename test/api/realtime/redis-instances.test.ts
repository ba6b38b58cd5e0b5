import { afterAll, beforeAll, expect, it } from 'vitest'
import { createSharedState, type SharedState } from '../../../src/core/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { type NotesApp, notesApp, notesDatabase } from './notes-app.ts'
import { EventReader } from './sse.ts'

type Json = Record<string, unknown>

/**
 * Two instances of one app: one database, one Redis, each its own shared state and realtime
 * core, as two processes would have them.
 */
describeEachDatabase(
  'realtime across instances sharing Redis',
  (backend) => {
    let test: TestDatabase
    let redis: TestRedis
    const shared: SharedState[] = []
    let a: NotesApp
    let b: NotesApp

    beforeAll(async () => {
      test = await notesDatabase(backend)
      redis = await createTestRedis()
      for (let i = 0; i < 2; i++) {
        shared.push(await createSharedState({ redisUrl: redisUrl!, prefix: redis.prefix }))
      }
      const prefix = `${redis.prefix}:realtime:`
      a = await notesApp(test.database, { shared: shared[0], prefix, maxStreamsPerKey: 1 })
      b = await notesApp(test.database, { shared: shared[1], prefix, maxStreamsPerKey: 1 })
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      for (const state of shared) await state.close()
      await redis?.cleanup()
      await test?.cleanup()
    })

    const stream = async (api: NotesApp, headers: Record<string, string> = {}) => {
      const response = await api.app.request('/api/v1/notes/events', {
        headers: { ...api.writer, ...headers },
      })
      expect(response.status).toBe(200)
      return new EventReader(response)
    }
    const create = async (api: NotesApp, title: string) => {
      const response = await api.request('POST', '/api/v1/notes', { title })
      return ((await response.json()) as { data: Json }).data
    }

    it('each delivers the other’s changes, numbered from one counter', async () => {
      const onA = await stream(a)
      const onB = await stream(b)
      const one = await create(a, 'from a')
      const two = await create(b, 'from b')
      const seenOnB = await onB.take(2)
      const seenOnA = await onA.take(2)
      await onA.cancel()
      await onB.cancel()
      expect(seenOnB.map((e) => (e.data as Json).id)).toEqual([one.id, two.id])
      expect(seenOnA).toEqual(seenOnB)
      expect(Number(seenOnB[1]!.id)).toBe(Number(seenOnB[0]!.id) + 1)
    })

    it('a stream resumed on the other instance loses nothing: the window is in Redis', async () => {
      const first = await stream(a)
      await create(a, 'before')
      const [last] = await first.take(1)
      await first.cancel()
      const made = [await create(a, 'missed 1'), await create(b, 'missed 2')]
      const resumed = await stream(b, { 'last-event-id': last!.id! })
      const replay = await resumed.take(2)
      await resumed.cancel()
      expect(replay.map((e) => (e.data as Json).id)).toEqual(made.map((m) => m.id))
    })

    it('the stream limit per key holds across instances', async () => {
      const open = await stream(a)
      const refused = await b.app.request('/api/v1/notes/events', { headers: a.writer })
      expect(refused.status).toBe(429)
      await open.cancel()
    })
  },
  { only: ['postgres'] },
)
