import { afterEach, beforeEach, expect, it } from 'vitest'
import { revokeApiKey } from '../../../src/api/index.ts'
import { healthRoutes } from '../../../src/core/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { type NotesApp, notesApp, notesDatabase } from './notes-app.ts'
import { EventReader } from './sse.ts'

type Json = Record<string, unknown>

describeEachDatabase(
  'event streams: resume, window, limits and endings',
  (backend) => {
    let test: TestDatabase
    const apps: NotesApp[] = []
    const start = async (options: Parameters<typeof notesApp>[1] = {}) => {
      const api = await notesApp(test.database, options)
      apps.push(api)
      return api
    }

    beforeEach(async () => {
      test = await notesDatabase(backend)
    })
    afterEach(async () => {
      for (const api of apps.splice(0)) await api.close()
      await test?.cleanup()
    })

    const open = async (api: NotesApp, headers: Record<string, string> = api.writer) => {
      const response = await api.app.request('/api/v1/notes/events', { headers })
      let reader: EventReader | undefined
      return {
        response,
        get events() {
          reader ??= new EventReader(response)
          return reader
        },
      }
    }
    const write = (api: NotesApp, n: number) =>
      api.request(
        'POST',
        '/api/v1/notes',
        Array.from({ length: n }, (_, i) => ({ title: `n${i}` })),
      )

    it('Last-Event-ID within the window resumes with nothing lost, in order', async () => {
      const api = await start()
      const first = await open(api)
      await write(api, 1)
      const [seen] = await first.events.take(1)
      await first.events.cancel()
      await write(api, 3)
      const resumed = await api.app.request('/api/v1/notes/events', {
        headers: { ...api.writer, 'last-event-id': seen!.id! },
      })
      const replay = await new EventReader(resumed).take(3)
      expect(replay.map((e) => Number(e.id))).toEqual([1, 2, 3].map((i) => Number(seen!.id) + i))
      expect(replay.map((e) => e.event)).toEqual(['created', 'created', 'created'])
    })

    it('a resume longer than the waiting bound is a replay, not a slow consumer', async () => {
      const api = await start({ maxPending: 2 })
      const first = await open(api)
      await write(api, 1)
      const [seen] = await first.events.take(1)
      await first.events.cancel()
      await write(api, 6)
      const resumed = await api.app.request('/api/v1/notes/events', {
        headers: { ...api.writer, 'last-event-id': seen!.id! },
      })
      const events = new EventReader(resumed)
      expect((await events.take(6)).map((e) => e.event)).toEqual(Array(6).fill('created'))
      await events.cancel()
    })

    it('beyond the window the client is told to re-read, never left in silence', async () => {
      const api = await start({ window: { size: 2 } })
      const first = await open(api)
      await write(api, 1)
      const [seen] = await first.events.take(1)
      await first.events.cancel()
      await write(api, 5)
      const resumed = await api.app.request('/api/v1/notes/events', {
        headers: { ...api.writer, 'last-event-id': seen!.id! },
      })
      const events = new EventReader(resumed)
      expect(await events.next()).toEqual({ event: 'reread', data: { reason: 'events_lost' } })
      await write(api, 1)
      expect((await events.next())?.event).toBe('created')
      await events.cancel()
    })

    it('a consumer that does not read is cut at its buffer, with a reason', async () => {
      const api = await start({ bufferBytes: 2_048 })
      const { response } = await open(api)
      // Nothing reads the body: the buffer fills, then the stream ends.
      for (let i = 0; i < 100 && api.realtime.status().streams > 0; i++) await write(api, 5)
      expect(api.realtime.status().streams).toBe(0)
      const all = await new EventReader(response).rest()
      expect(all.at(-1)).toEqual({ event: 'end', data: { reason: 'slow_consumer' } })
      const bytes = all.reduce((sum, e) => sum + JSON.stringify(e.data).length, 0)
      expect(bytes).toBeLessThan(2_048 + 1_024)
    })

    it('streams per key and per address are limited: 429 with {error, code}', async () => {
      const api = await start({ maxStreamsPerKey: 1, maxStreamsPerIp: 2 })
      const one = await open(api)
      expect(one.response.status).toBe(200)
      const refused = await open(api)
      expect(refused.response.status).toBe(429)
      expect(await refused.response.json()).toEqual({
        error: 'Too many open streams',
        code: 'too_many_requests',
      })
      const other = await api.key(['notes:read'])
      const two = await open(api, { authorization: other.authorization })
      expect(two.response.status).toBe(200)
      const third = await api.key(['notes:read'])
      expect((await open(api, { authorization: third.authorization })).response.status).toBe(429)
      await one.events.cancel()
      expect((await open(api)).response.status).toBe(200)
    })

    it('a revoked key ends its stream', async () => {
      const api = await start({ heartbeatMs: 50 })
      const reader = await api.key(['notes:read'])
      const { events } = await open(api, { authorization: reader.authorization })
      await revokeApiKey(test.database, reader.id)
      expect(await events.rest()).toEqual([{ event: 'end', data: { reason: 'key_rejected' } }])
    })

    it('readiness reports the open streams an app gives it', async () => {
      const api = await start()
      const details = () => ({ streams: api.realtime.status().streams })
      api.app.route('/', healthRoutes({ checks: {}, details }))
      const { events } = await open(api)
      expect(await (await api.app.request('/health')).json()).toEqual({
        status: 'ok',
        dependencies: {},
        streams: 1,
      })
      await events.cancel()
      expect(((await (await api.app.request('/health')).json()) as Json).streams).toBe(0)
    })

    it('shutdown ends every stream with its reason', async () => {
      const api = await start()
      const { events } = await open(api)
      await write(api, 1)
      expect((await events.next())?.event).toBe('created')
      await api.realtime.close()
      expect(await events.rest()).toEqual([{ event: 'end', data: { reason: 'shutdown' } }])
      expect(api.realtime.status().streams).toBe(0)
    })
  },
  { only: ['sqlite', 'postgres'] },
)

export type { Json }
