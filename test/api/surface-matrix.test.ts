import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry } from '../../src/db/index.ts'
import { DATA_TOOLS } from '../../src/mcp/data/tools.ts'
import { createDataTools, createMcpServer } from '../../src/mcp/index.ts'
import * as pgSchema from '../fixtures/trash/postgres/schema.ts'
import * as sqliteSchema from '../fixtures/trash/sqlite/schema.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { describeEachDatabase } from '../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  TRASH,
} from './rest/generated-app.ts'

type Json = Record<string, unknown>
type Surface = 'rest' | 'openapi' | 'mcp'
type OpenApi = {
  paths: Record<
    string,
    Record<string, { operationId: string; parameters?: Array<{ name: string }> }>
  >
}

/** What one cell sees: the running app, its documents, an MCP client and a trashed record. */
interface Cell {
  api: RunningApi
  doc: OpenApi
  mcp: Client
  trashed: { id: string | number; title: string }
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>
  parameters(operationId: string): string[]
}

/** A cell: a check, or why the declaration has nothing to do on that surface. */
type Check = ((cell: Cell) => Promise<void>) | { notApplicable: string }

const na = (notApplicable: string): Check => ({ notApplicable })
const path = '/api/v1/documents'
const count = async (cell: Cell, query = '') =>
  (
    (await cell.rest('GET', `${path}/aggregate?count=*${query}`)).body.data as Array<{
      count: number
    }>
  )[0]!.count
const listed = async (cell: Cell) =>
  ((await cell.rest('GET', `${path}?per_page=100`)).body.data as Array<{ id: unknown }>).map(
    (d) => d.id,
  )

/**
 * The soft-delete declaration (a `deleted_at` column) on every operation of the resource and
 * every surface. The operations come from the app's own OpenAPI document and the MCP tools from
 * their descriptors: an operation or a tool added without its row here fails the catalogue test.
 */
const SOFT_DELETE: Record<string, Record<Surface, Check>> = {
  listDocuments: {
    rest: async (cell) => expect(await listed(cell)).not.toContain(cell.trashed.id),
    openapi: async (cell) => expect(cell.parameters('listDocuments')).toContain('filter[trashed]'),
    mcp: na('crud_list is an MCP tool of its own (below)'),
  },
  aggregateDocuments: {
    rest: async (cell) => {
      expect(await count(cell)).toBe((await listed(cell)).length)
      expect(await count(cell, '&filter[trashed]=with')).toBe((await listed(cell)).length + 1)
    },
    openapi: async (cell) =>
      expect(cell.parameters('aggregateDocuments')).toContain('filter[trashed]'),
    mcp: na('crud_aggregate is an MCP tool of its own (below)'),
  },
  showDocument: {
    rest: async (cell) =>
      expect((await cell.rest('GET', `${path}/${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a trashed record is a 404, which the operation documents'),
    mcp: na('no MCP tool shows one record'),
  },
  createDocument: {
    rest: na('a new record is never in the trash; deleted_at is not writable (rest/soft-delete)'),
    openapi: na('the create request has no deleted_at field'),
    mcp: na('crud_create (below)'),
  },
  updateDocument: {
    rest: async (cell) =>
      expect((await cell.rest('PUT', `${path}/${cell.trashed.id}`, { title: 'x' })).status).toBe(
        404,
      ),
    openapi: na('a 404, documented'),
    mcp: na('crud_update (below)'),
  },
  patchDocument: {
    rest: async (cell) =>
      expect((await cell.rest('PATCH', `${path}/${cell.trashed.id}`, { title: 'x' })).status).toBe(
        404,
      ),
    openapi: na('a 404, documented'),
    mcp: na('crud_update (below)'),
  },
  deleteDocument: {
    rest: async (cell) =>
      expect((await cell.rest('DELETE', `${path}/${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a 404, documented'),
    mcp: na('crud_delete (below)'),
  },
  updateDocuments: {
    rest: async (cell) =>
      expect((await cell.rest('PATCH', path, [{ id: cell.trashed.id, title: 'x' }])).status).toBe(
        404,
      ),
    openapi: na('a 404 naming the index, documented'),
    mcp: na('no bulk MCP tool'),
  },
  deleteDocuments: {
    rest: async (cell) =>
      expect((await cell.rest('DELETE', `${path}?ids=${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a 404 naming the index, documented'),
    mcp: na('no bulk MCP tool'),
  },
  restoreDocument: {
    rest: async (cell) => {
      // Restoring a live record leaves it as it is; the trashed one is restored in its own suite.
      const [live] = await listed(cell)
      expect((await cell.rest('POST', `${path}/${live}/restore`)).status).toBe(200)
    },
    openapi: async (cell) => expect(cell.parameters('restoreDocument')).toContain('id'),
    mcp: na('no restore MCP tool'),
  },
  // The MCP tools, one row each, by their descriptors.
  crud_list: {
    rest: na('an MCP tool'),
    openapi: na('an MCP tool'),
    mcp: async (cell) => {
      const page = await call(cell.mcp, 'crud_list', { model: 'documents', per_page: 100 })
      const ids = (page.json as { records: Array<{ id: unknown }> }).records.map((r) => r.id)
      expect(ids).not.toContain(cell.trashed.id)
    },
  },
  crud_aggregate: {
    rest: na('an MCP tool'),
    openapi: na('an MCP tool'),
    mcp: async (cell) => {
      const answer = await call(cell.mcp, 'crud_aggregate', {
        model: 'documents',
        group_by: ['title'],
      })
      const titles = (answer.json as { data: Array<{ group: Json }> }).data.map(
        (g) => g.group.title,
      )
      expect(titles).not.toContain(cell.trashed.title)
      expect(titles.length).toBe((await listed(cell)).length)
    },
  },
  crud_create: {
    rest: na('an MCP tool'),
    openapi: na('an MCP tool'),
    mcp: async (cell) => {
      const made = await call(cell.mcp, 'crud_create', {
        model: 'documents',
        data: { title: 'Matrix', deleted_at: new Date().toISOString() },
      })
      expect(made.text).toMatch(/deleted_at/)
    },
  },
  crud_update: {
    rest: na('an MCP tool'),
    openapi: na('an MCP tool'),
    mcp: async (cell) => {
      const changed = await call(cell.mcp, 'crud_update', {
        model: 'documents',
        id: cell.trashed.id,
        data: { title: 'x' },
      })
      expect(changed.text).toMatch(/No documents record/)
    },
  },
  crud_delete: {
    rest: na('an MCP tool'),
    openapi: na('an MCP tool'),
    mcp: async (cell) => {
      const again = await call(cell.mcp, 'crud_delete', { model: 'documents', id: cell.trashed.id })
      expect(again.isError).toBe(true)
    },
  },
}

const SURFACES: Surface[] = ['rest', 'openapi', 'mcp']

describeEachDatabase('the soft-delete declaration on every operation and surface', (backend) => {
  let scaffolded: ScaffoldedApp
  const cell = {} as Cell

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: TRASH[backend.dialect] })
    cell.api = await startGeneratedApi(scaffolded, backend)
    cell.rest = async (method, route, body) => {
      const response = await cell.api.request(method, route, body)
      return { status: response.status, body: (await response.json()) as Json }
    }
    cell.doc = (await (await cell.api.app.request('/api/openapi.json')).json()) as OpenApi
    cell.parameters = (operationId) => {
      for (const item of Object.values(cell.doc.paths)) {
        for (const operation of Object.values(item)) {
          if (operation.operationId === operationId)
            return (operation.parameters ?? []).map((p) => p.name)
        }
      }
      throw new Error(`no operation ${operationId}`)
    }
    const made = await cell.rest('POST', path, [
      { title: 'Live 1' },
      { title: 'Live 2' },
      { title: 'Trashed' },
    ])
    const docs = made.body.data as Array<{ id: string | number; title: string }>
    cell.trashed = docs[2]!
    expect((await cell.rest('DELETE', `${path}/${cell.trashed.id}`)).status).toBe(200)
    const schema = backend.dialect === 'postgres' ? pgSchema : sqliteSchema
    const tools = createDataTools({
      database: cell.api.database,
      models: createModelRegistry(schema, backend.dialect),
      access: { unlisted: 'all', approval: [] },
      logger: silentLogger(),
    })
    cell.mcp = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  })
  afterAll(async () => {
    await cell.mcp?.close()
    await cell.api?.close()
    scaffolded?.cleanup()
  })

  it('every operation of the document and every MCP tool has its row', () => {
    const operations = Object.values(cell.doc.paths)
      .flatMap((item) => Object.values(item))
      .map((operation) => operation.operationId)
      .filter((id) => /Documents?$/.test(id))
    const expected = [...operations, ...DATA_TOOLS.map((tool) => tool.name)].sort()
    expect(Object.keys(SOFT_DELETE).sort()).toEqual(expected)
  })

  for (const [operation, row] of Object.entries(SOFT_DELETE)) {
    for (const surface of SURFACES) {
      const check = row[surface]
      if (typeof check === 'function') {
        it(`${operation} × ${surface}`, () => check(cell))
      } else {
        it(`${operation} × ${surface}: not applicable (${check.notApplicable})`, () => {
          expect(check.notApplicable.length).toBeGreaterThan(0)
        })
      }
    }
  }
})

describe('the matrix catalogue', () => {
  it('names each surface of every row, a check or the reason it has none', () => {
    for (const [operation, row] of Object.entries(SOFT_DELETE)) {
      expect(Object.keys(row).sort(), operation).toEqual([...SURFACES].sort())
    }
  })
})
