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
})
