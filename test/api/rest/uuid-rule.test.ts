import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import type { PostgresDatabase } from '../../../src/db/index.ts'
import { createModelRegistry } from '../../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import { call, connectInMemory, ok } from '../../mcp/support/client.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  KITCHEN_SINK,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

type Json = Record<string, unknown>

/** Ids PostgreSQL stores but RFC 9562 would not draw (no version or variant digit). */
const FIXTURE_ID = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa'
const LEGACY_ID = '11111111-1111-1111-1111-111111111111'

/**
 * One uuid rule on every surface, and one set of words for what is refused: a uuid-keyed
 * schema (kitchen-sink's orders, and ledger entries pointing at them) with ids from fixtures.
 */
describeEachDatabase(
  'uuid values: what PostgreSQL takes, on REST, MCP and OpenAPI',
  (backend) => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    let client: Client

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect, { app: KITCHEN_SINK.postgres })
      api = await startGeneratedApi(scaffolded, backend)
      const { db } = api.database as PostgresDatabase
      await db.execute(
        `INSERT INTO "user" (email, name, password_hash, created_at) VALUES ('a@example.com', 'A', 'x', now())`,
      )
      for (const id of [FIXTURE_ID, LEGACY_ID]) {
        await db.execute(
          `INSERT INTO "order" (id, user_id, kind, total, labels) VALUES ('${id}', 1, 'retail', 1, '[]')`,
        )
      }
      const schema = await import(`${scaffolded.root}/src/schema.ts`)
      const requests = await import(`${scaffolded.outDir}/requests/ledger-entry.ts`)
      const orders = await import(`${scaffolded.outDir}/requests/order.ts`)
      const tools = createDataTools({
        database: api.database,
        models: createModelRegistry(schema, backend.dialect),
        requests: {
          ledger_entries: {
            create: requests.CreateLedgerEntryRequest,
            update: requests.UpdateLedgerEntryRequest,
          },
          orders: { create: orders.CreateOrderRequest, update: orders.UpdateOrderRequest },
        },
        access: { unlisted: 'all', approval: [] },
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

    it('the generated schemas use kiln’s uuid(), not zod’s RFC-only z.uuid()', () => {
      for (const file of ['requests/ledger-entry.ts', 'resources/order.ts']) {
        const source = readFileSync(join(scaffolded.outDir, file), 'utf8')
        expect(source, file).toMatch(/import \{[^}]*\buuid\b[^}]*\} from 'kilnjs\/api'/)
        expect(source, file).toMatch(/: uuid\(\)/)
        expect(source, file).not.toContain('z.uuid(')
      }
    })

    it('REST: a foreign key to a fixture id is written; a non-uuid is refused in REST words', async () => {
      const created = await rest('POST', '/api/v1/ledger_entries', {
        order_id: FIXTURE_ID,
        amount: '2.5',
      })
      expect(created.status).toBe(201)
      expect((created.body.data as Json).order_id).toBe(FIXTURE_ID)
      const shown = await rest('GET', `/api/v1/orders/${LEGACY_ID}`)
      expect(shown.status).toBe(200)
      const filtered = await rest('GET', `/api/v1/ledger_entries?filter[order_id]=${FIXTURE_ID}`)
      expect((filtered.body.data as Json[]).length).toBe(1)
      const refused = await rest('POST', '/api/v1/ledger_entries', {
        order_id: 'not-a-uuid',
        amount: '1',
      })
      expect(refused.status).toBe(422)
      expect((refused.body.errors as Json).order_id).toEqual(['must be a UUID'])
    })

    it('MCP: crud_create takes the fixture id and words a refusal as REST does', async () => {
      const made = await ok<Json>(client, 'crud_create', {
        model: 'ledger_entries',
        data: { order_id: LEGACY_ID, amount: '3' },
      })
      expect(made.order_id).toBe(LEGACY_ID)
      const refused = await call(client, 'crud_create', {
        model: 'ledger_entries',
        data: { order_id: 'not-a-uuid', amount: '1' },
      })
      expect(refused.isError).toBe(true)
      expect(refused.text).toBe('Invalid data for ledger_entries: order_id: must be a UUID')
    })

    it('null on a NOT NULL jsonb column: "must not be null" on REST and MCP alike', async () => {
      const body = { user_id: 1, kind: 'retail', total: '1', labels: null }
      const viaRest = await rest('POST', '/api/v1/orders', body)
      expect(viaRest.status).toBe(422)
      expect((viaRest.body.errors as Json).labels).toEqual(['must not be null'])
      const viaMcp = await call(client, 'crud_create', { model: 'orders', data: body })
      expect(viaMcp.isError).toBe(true)
      expect(viaMcp.text).toBe('Invalid data for orders: labels: must not be null')
      const absent = await rest('POST', '/api/v1/orders', { ...body, labels: undefined })
      expect((absent.body.errors as Json).labels).toEqual(['is required'])
    })

    it('OpenAPI: the id pattern and format accept the ids the API returns', async () => {
      const doc = (await (await api.app.request('/api/openapi.json')).json()) as {
        components: { schemas: Record<string, { properties: Record<string, Json> }> }
        paths: Record<string, Record<string, { parameters?: Json[] }>>
      }
      const idSchema = doc.components.schemas.Order?.properties.id as Json
      const fkSchema = doc.components.schemas.CreateLedgerEntryRequest?.properties.order_id as Json
      const pathId = doc.paths['/api/v1/orders/{id}']?.get?.parameters?.find((p) => p.name === 'id')
        ?.schema as Json
      for (const schema of [idSchema, fkSchema, pathId]) {
        expect(schema).toMatchObject({ type: 'string', format: 'uuid' })
        const pattern = new RegExp(schema.pattern as string)
        for (const id of [FIXTURE_ID, LEGACY_ID, FIXTURE_ID.toUpperCase()]) {
          expect(pattern.test(id), `${String(schema.pattern)} ${id}`).toBe(true)
        }
        expect(pattern.test('aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa')).toBe(false)
      }
    })
  },
  { only: ['pglite', 'postgres'] },
)
