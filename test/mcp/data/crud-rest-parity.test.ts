import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type SQL, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRecordCounter, type RecordCounter } from '../../../src/api/index.ts'
import {
  ManualClock,
  MemoryKeyValueStore,
  RedisKeyValueStore,
  silentLogger,
} from '../../../src/core/index.ts'
import { createModelRegistry } from '../../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import {
  RENTALS,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from '../../api/rest/generated-app.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { call, connectInMemory, ok } from '../support/client.ts'

type Json = Record<string, unknown>

/** A record counter that tells how many counts it let through to the database. */
function countingCounter(inner: RecordCounter): RecordCounter & { queries: number } {
  const counter = {
    queries: 0,
    total: (table, page, rows, count) =>
      inner.total(table, page, rows, () => {
        counter.queries++
        return typeof count === 'function' ? count() : count
      }),
    count: (table, variant, count) =>
      inner.count(table, variant, () => {
        counter.queries++
        return typeof count === 'function' ? count() : count
      }),
    invalidate: (table) => inner.invalidate(table),
  } satisfies RecordCounter & { queries: number }
  return counter
}

/**
 * The data tools and the generated REST API on one database: the same rule for column values,
 * the same words for a unique pair, and one cached, shared count behind both lists' `total`.
 */
describeEachDatabase('data tools beside the generated REST API', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let client: Client
  // Never advanced: a cached count stays trusted, so only invalidation can refresh it.
  const store = new MemoryKeyValueStore({ clock: new ManualClock(1_000_000) })
  const counts = countingCounter(createRecordCounter({ store }))

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: RENTALS[backend.dialect] })
    api = await startGeneratedApi(scaffolded, backend, { counts })
    const schema = await import(`${scaffolded.root}/src/schema.ts`)
    const tools = createDataTools({
      database: api.database,
      models: createModelRegistry(schema, backend.dialect),
      access: { unlisted: 'all', approval: [] },
      counts,
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

  describe('writes under the REST request schemas (requests)', () => {
    async function toolsWithRequests(write?: string[]) {
      const schema = await import(`${scaffolded.root}/src/schema.ts`)
      const requests = await import(`${scaffolded.root}/src/api/requests/tool.ts`)
      return createDataTools({
        database: api.database,
        models: createModelRegistry(schema, backend.dialect),
        requests: {
          tools: { create: requests.CreateToolRequest, update: requests.UpdateToolRequest },
        },
        access: {
          models: { tools: { tools: ['crud_list', 'crud_create', 'crud_update'], write } },
          approval: [],
        },
        counts,
        logger: silentLogger(),
      })
    }

    it('crud_create and crud_update refuse what the REST routes refuse, changing nothing', async () => {
      const strict = await connectInMemory(
        createMcpServer({ dataTools: { tools: await toolsWithRequests() } }),
      )
      try {
        // An empty name passes the column's type but not the request's rule (min 1).
        const viaRest = await rest('POST', '/api/v1/tools', { name: '', daily_rate: 2 })
        expect(viaRest.status).toBe(422)
        const before = await rest('GET', '/api/v1/tools?count=exact')
        const created = await call(strict, 'crud_create', {
          model: 'tools',
          data: { name: '', daily_rate: 2 },
        })
        expect(created.isError).toBe(true)
        expect(created.text).toMatch(/^Invalid data for tools: name: /)
        const made = await ok<Json>(strict, 'crud_create', {
          model: 'tools',
          data: { name: 'Plane', daily_rate: 2 },
        })
        const updated = await call(strict, 'crud_update', {
          model: 'tools',
          id: made.id as number,
          data: { name: '' },
        })
        expect(updated.isError).toBe(true)
        expect(updated.text).toMatch(/^Invalid data for tools: name: /)
        const after = await rest('GET', '/api/v1/tools?count=exact')
        expect((after.body.meta as Json).total).toBe(
          ((before.body.meta as Json).total as number) + 1,
        )
      } finally {
        await strict.close()
      }
    })

    it('a model with request schemas names no write list of its own', async () => {
      await expect(toolsWithRequests(['name'])).rejects.toThrow(
        /tools\.write: its writable fields are its request schemas'/,
      )
    })
  })

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

  describe("crud_list's total shares the REST list's counter", () => {
    const page = { model: 'tools', per_page: 2, page: 1 }
    const totalOf = async () => (await ok<{ total: number }>(client, 'crud_list', page)).total
    const restTotal = async () =>
      ((await rest('GET', '/api/v1/tools?per_page=2')).body.meta as { total: number }).total
    const query = async (statement: SQL) => {
      const database = api.database
      return (
        database.dialect === 'postgres'
          ? (await database.db.execute(statement)).rows
          : database.db.all(statement)
      ) as Json[]
    }
    const rows = async () => Number((await query(sql`select count(*) as n from tools`))[0]?.n)

    it('counts once, not on every call', async () => {
      const total = await totalOf()
      const before = counts.queries
      for (let call = 0; call < 10; call++) expect(await totalOf()).toBe(total)
      expect(await restTotal()).toBe(total)
      expect(counts.queries).toBe(before)
    })

    it('is exact after a write through a tool, and through REST', async () => {
      const start = await totalOf()
      const created = await ok<Json>(client, 'crud_create', {
        model: 'tools',
        data: { name: 'Jigsaw', daily_rate: '4' },
      })
      expect(await totalOf()).toBe(start + 1)
      expect(await restTotal()).toBe(start + 1)
      expect((await rest('POST', '/api/v1/tools', { name: 'Plane', daily_rate: '2' })).status).toBe(
        201,
      )
      expect(await totalOf()).toBe(start + 2)
      await ok(client, 'crud_delete', { model: 'tools', id: created.id })
      expect(await restTotal()).toBe(start + 1)
      expect(await totalOf()).toBe(await rows())
    })

    it('a write outside kiln shows once the cached count is dropped', async () => {
      const start = await totalOf()
      await query(sql`insert into tools (name, daily_rate) values ('Vise', 1) returning id`)
      // Still the cached count: nothing told kiln (the count is trusted `ttlMs`, 5 s by default).
      expect(await totalOf()).toBe(start)
      await counts.invalidate('tools')
      expect(await totalOf()).toBe(start + 1)
    })
  })

  describe('two instances sharing the count through Redis', () => {
    let redis: TestRedis
    const instances: Client[] = []

    beforeAll(async () => {
      redis = await createTestRedis()
      const schema = await import(`${scaffolded.root}/src/schema.ts`)
      for (let instance = 0; instance < 2; instance++) {
        const store = new RedisKeyValueStore(redis.connections.connect(), { prefix: redis.prefix })
        const tools = createDataTools({
          database: api.database,
          models: createModelRegistry(schema, backend.dialect),
          access: { unlisted: 'all', approval: [] },
          counts: createRecordCounter({ store, ttlMs: 3_600_000 }),
          logger: silentLogger(),
        })
        instances.push(await connectInMemory(createMcpServer({ dataTools: { tools } })))
      }
    })
    afterAll(async () => {
      for (const instance of instances) await instance.close()
      await redis?.cleanup()
    })

    it("a write through one instance's tools shows in the other's total", async () => {
      const [first, second] = instances as [Client, Client]
      const list = { model: 'tools', per_page: 1, page: 1 }
      const start = (await ok<{ total: number }>(second, 'crud_list', list)).total
      await ok(first, 'crud_create', { model: 'tools', data: { name: 'Clamp', daily_rate: '1' } })
      expect((await ok<{ total: number }>(second, 'crud_list', list)).total).toBe(start + 1)
    })
  })
})
