import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  RENTALS,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

type Json = Record<string, unknown>

describeEachDatabase('generated REST API on the rentals schema', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: RENTALS[backend.dialect] })
    api = await startGeneratedApi(scaffolded, backend)
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  async function send(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) {
    const response = await api.request(method, path, body, headers)
    return { response, status: response.status, body: (await response.json()) as Json }
  }

  async function createTool(fields: Json = {}) {
    const { status, body } = await send('POST', '/api/v1/tools', {
      name: 'Drill',
      daily_rate: '12.50',
      ...fields,
    })
    expect(status).toBe(201)
    return body.data as Json
  }

  describe('numeric fields', () => {
    it('answer each kind of wrong value with its own message', async () => {
      const cases: Array<[unknown, string]> = [
        [undefined, 'is required'],
        [null, 'must not be null'],
        [true, 'must be a string or a number'],
        ['1e3', 'must be a decimal number written in digits, like "12.50"'],
        ['twelve', 'must be a decimal number written in digits, like "12.50"'],
      ]
      for (const [value, message] of cases) {
        const { status, body } = await send('POST', '/api/v1/tools', {
          name: 'Saw',
          daily_rate: value,
        })
        expect(status).toBe(422)
        expect(body.errors).toEqual({ daily_rate: [message] })
      }
    })

    it('refuse digits the column would round (SQLite keeps them: its numeric has no scale)', async () => {
      const { status, body } = await send('POST', '/api/v1/tools', {
        name: 'Saw',
        daily_rate: '3.005',
      })
      if (backend.dialect === 'sqlite') {
        expect(status).toBe(201)
        expect((body.data as Json).daily_rate).toBe('3.005')
        return
      }
      expect(status).toBe(422)
      expect(body.errors).toEqual({
        daily_rate: [
          'must be a number with at most 8 digits before the decimal point and 2 after it',
        ],
      })
    })

    it('take a JSON number and a numeric string', async () => {
      expect(Number((await createTool({ daily_rate: 3.1 })).daily_rate)).toBe(3.1)
      expect(Number((await createTool({ daily_rate: '3.10' })).daily_rate)).toBe(3.1)
    })
  })

  describe('a unique pair of columns', () => {
    it('names both columns of a duplicate pair', async () => {
      const tool = await createTool()
      const booking = { tool_id: tool.id, starts_on: '2025-03-01' }
      expect((await send('POST', '/api/v1/bookings', booking)).status).toBe(201)
      const { status, body } = await send('POST', '/api/v1/bookings', booking)
      expect(status).toBe(422)
      expect(body.errors).toEqual({
        tool_id: ['has already been taken with this starts_on'],
        starts_on: ['has already been taken with this tool_id'],
      })
      const other = await send('POST', '/api/v1/bookings', { ...booking, starts_on: '2025-03-02' })
      expect(other.status).toBe(201)
    })
  })

  describe('timestamps', () => {
    it('a created record has one reading of the clock in created_at and updated_at', async () => {
      const tool = await createTool()
      expect(tool.updated_at).not.toBeNull()
      expect(tool.updated_at).toBe(tool.created_at)
      const { body } = await send('GET', `/api/v1/tools/${tool.id}`)
      expect((body.data as Json).updated_at).toBe((body.data as Json).created_at)
    })

    it('an update moves updated_at, never before created_at', async () => {
      const tool = await createTool()
      const { status, body } = await send('PATCH', `/api/v1/tools/${tool.id}`, { name: 'Planer' })
      expect(status).toBe(200)
      const updated = body.data as Json
      expect(updated.created_at).toBe(tool.created_at)
      expect(Date.parse(String(updated.updated_at))).toBeGreaterThanOrEqual(
        Date.parse(String(updated.created_at)),
      )
    })
  })

  describe('If-Match on writes (lost-update protection)', () => {
    const etagOf = async (path: string) => {
      const { response } = await send('GET', path)
      return response.headers.get('etag') ?? ''
    }
    const nameOf = async (path: string) => ((await send('GET', path)).body.data as Json).name

    for (const method of ['PUT', 'PATCH'] as const) {
      it(`${method}: the ETag show sent passes, a stale or weak one is 412 and changes nothing`, async () => {
        const path = `/api/v1/tools/${(await createTool({ name: 'Hammer' })).id}`
        const tag = await etagOf(path)
        expect(tag).toMatch(/^"[\w-]+"$/)
        for (const stale of ['"stale"', `W/${tag}`, '"a", "b"']) {
          const refused = await send(method, path, { name: 'Lost' }, { 'if-match': stale })
          expect(refused.status).toBe(412)
          expect(refused.body).toEqual({
            error: 'Precondition Failed',
            code: 'precondition_failed',
          })
        }
        expect(await nameOf(path)).toBe('Hammer')
        const first = await send(method, path, { name: 'Mallet' }, { 'if-match': `"x", ${tag}` })
        expect(first.status).toBe(200)
        // The tag now names a version that is gone: a second writer holding it is refused.
        const second = await send(method, path, { name: 'Sledge' }, { 'if-match': tag })
        expect(second.status).toBe(412)
        expect(await nameOf(path)).toBe('Mallet')
        expect(first.response.headers.get('etag')).toBeNull()
        const fresh = await etagOf(path)
        expect(fresh).not.toBe(tag)
        expect((await send(method, path, { name: 'Sledge' }, { 'if-match': fresh })).status).toBe(
          200,
        )
      })
    }

    it('DELETE: 412 for a stale tag, deleted with the current one', async () => {
      const path = `/api/v1/tools/${(await createTool()).id}`
      const tag = await etagOf(path)
      await send('PATCH', path, { name: 'Changed' })
      expect((await send('DELETE', path, undefined, { 'if-match': tag })).status).toBe(412)
      expect((await send('GET', path)).status).toBe(200)
      const deleted = await send('DELETE', path, undefined, { 'if-match': await etagOf(path) })
      expect(deleted.status).toBe(200)
      expect((await send('GET', path)).status).toBe(404)
    })

    it('* passes when the record exists; a missing record is 404 whatever the header', async () => {
      const path = `/api/v1/tools/${(await createTool()).id}`
      expect((await send('PATCH', path, { name: 'Any' }, { 'if-match': '*' })).status).toBe(200)
      expect((await send('DELETE', path, undefined, { 'if-match': '*' })).status).toBe(200)
      expect((await send('PATCH', path, { name: 'Gone' }, { 'if-match': '*' })).status).toBe(404)
      expect((await send('DELETE', path, undefined, { 'if-match': '"x"' })).status).toBe(404)
    })
  })
})
