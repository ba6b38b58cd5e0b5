import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry } from '../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../src/mcp/index.ts'
import {
  RENTALS,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from '../api/rest/generated-app.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { call, connectInMemory, ok } from './support/client.ts'

type Json = Record<string, unknown>

/**
 * The data tools and the generated REST API on one database: the same rule for column values,
 * the same words for a unique pair, one clock for the timestamps.
 */
describeEachDatabase('data tools beside the generated REST API', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let client: Client

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: RENTALS[backend.dialect] })
    api = await startGeneratedApi(scaffolded, backend)
    const schema = await import(`${scaffolded.root}/src/schema.ts`)
    const tools = createDataTools({
      database: api.database,
      models: createModelRegistry(schema, backend.dialect),
      access: { unlisted: 'all' },
      logger: silentLogger(),
    })
    client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  })
  afterAll(async () => {
    await client?.close()
    await api?.close()
    scaffolded?.cleanup()
  })

  async function rest(method: string, path: string, body?: unknown) {
    const response = await api.request(method, path, body)
    return { status: response.status, body: (await response.json()) as Json }
  }

  describe('numeric values', () => {
    it('crud_create refuses what REST refuses, with the same message', async () => {
      for (const value of ['1e3', true, null, 'twelve']) {
        const viaRest = await rest('POST', '/api/v1/tools', { name: 'Saw', daily_rate: value })
        expect(viaRest.status).toBe(422)
        const message = (viaRest.body.errors as Record<string, string[]>).daily_rate?.[0]
        const viaTool = await call(client, 'crud_create', {
          model: 'tools',
          data: { name: 'Saw', daily_rate: value },
        })
        expect(viaTool.isError).toBe(true)
        expect(viaTool.text).toBe(`Invalid data for tools: daily_rate: ${message}`)
      }
    })

    it('crud_create takes a JSON number as REST does', async () => {
      const created = await ok<Json>(client, 'crud_create', {
        model: 'tools',
        data: { name: 'Saw', daily_rate: 3.1 },
      })
      expect(Number(created.daily_rate)).toBe(3.1)
    })

    it('crud_create never rounds: more digits than numeric(10, 2) keeps are refused', async () => {
      const data = { name: 'Saw', daily_rate: '3.005' }
      const viaRest = await rest('POST', '/api/v1/tools', data)
      const viaTool = await call(client, 'crud_create', { model: 'tools', data })
      if (backend.dialect === 'postgres') {
        expect(viaRest.status).toBe(422)
        expect(viaTool.isError).toBe(true)
        expect(viaTool.text).toBe(
          'Invalid data for tools: daily_rate: must be a number with at most 8 digits before the decimal point and 2 after it',
        )
      } else {
        // SQLite's numeric has no precision: the value is kept as given, on both surfaces.
        expect(viaRest.status).toBe(201)
        expect((viaRest.body.data as Json).daily_rate).toBe('3.005')
        expect(JSON.parse(viaTool.text).daily_rate).toBe('3.005')
      }
    })

    it('crud_update follows the same rule', async () => {
      const tool = await ok<Json>(client, 'crud_create', {
        model: 'tools',
        data: { name: 'Lathe', daily_rate: '10' },
      })
      const refused = await call(client, 'crud_update', {
        model: 'tools',
        id: tool.id,
        data: { daily_rate: '1e3' },
      })
      expect(refused.text).toBe(
        'Invalid data for tools: daily_rate: must be a decimal number written in digits, like "12.50"',
      )
      const updated = await ok<Json>(client, 'crud_update', {
        model: 'tools',
        id: tool.id,
        data: { daily_rate: 99.5 },
      })
      expect(Number(updated.daily_rate)).toBe(99.5)
    })
  })

  it('a duplicate unique pair names both columns', async () => {
    const tool = await ok<Json>(client, 'crud_create', {
      model: 'tools',
      data: { name: 'Sander', daily_rate: '5' },
    })
    const data = { tool_id: tool.id, starts_on: '2025-04-01' }
    await ok(client, 'crud_create', { model: 'bookings', data })
    const duplicate = await call(client, 'crud_create', { model: 'bookings', data })
    expect(duplicate.isError).toBe(true)
    expect(duplicate.text).toBe(
      'Could not create bookings: a record with the same tool_id and starts_on already exists',
    )
  })

  it('crud_create fills created_at and updated_at from one reading of the clock', async () => {
    const tool = await ok<Json>(client, 'crud_create', {
      model: 'tools',
      data: { name: 'Router', daily_rate: '7' },
    })
    expect(tool.updated_at).not.toBeNull()
    expect(tool.updated_at).toBe(tool.created_at)
  })
})
