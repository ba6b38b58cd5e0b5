import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { expect } from 'vitest'
import { createApiKey, generateApiClient } from '../../../src/api/index.ts'
import type { ResourceDefinition } from '../../../src/api/resource/index.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { type AuditRecord, createAuditLog, createModelRegistry } from '../../../src/db/index.ts'
import { createAuditTrail, createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import { connectInMemory } from '../../mcp/support/client.ts'
import type { DatabaseBackend } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  TRASH,
} from '../rest/generated-app.ts'

export type Json = Record<string, unknown>

/** The surfaces a declaration must reach. */
export const SURFACES = ['rest', 'openapi', 'client', 'mcp', 'audit'] as const
export type Surface = (typeof SURFACES)[number]

export interface DocumentedOperation {
  operationId: string
  parameters?: Array<{ name: string; schema?: Json }>
  'x-scopes'?: string[]
}
export type OpenApi = { paths: Record<string, Record<string, DocumentedOperation>> }

/**
 * What one cell sees: the generated documents app on one backend (its definition, its
 * document, the typed client generated from it), an MCP client on its data, and a record in
 * the trash and one the row filter hides beside two live ones.
 */
export interface Cell {
  api: RunningApi
  definition: ResourceDefinition
  doc: OpenApi
  client: string
  mcp: Client
  /** The audit trail's entries of one MCP tool, newest first (the trail flushed first). */
  audited(tool: string): Promise<AuditRecord[]>
  trashed: { id: string | number; title: string }
  /** A record the documents' row filter hides from every key. */
  hidden: { id: string | number; title: string }
  /** A request with the app's `*` key, or with a key holding only `scopes`. */
  rest(
    method: string,
    path: string,
    body?: unknown,
    scopes?: string[],
  ): Promise<{ status: number; body: Json }>
  operation(operationId: string): DocumentedOperation
}

/** A cell: a check, or why the declaration has nothing to do on that surface. */
export type Check = ((cell: Cell) => Promise<void>) | { notApplicable: string }
export type Row = Record<Surface, Check>

export const na = (notApplicable: string): Check => ({ notApplicable })
export const path = '/api/v1/documents'

/** A row of an MCP tool: the check on its own surface, the reason on each of the others. */
export function toolRow(mcp: Check, audit: Check = na('read tools are not audited')): Row {
  const elsewhere = na('an MCP tool: the REST operations have rows of their own')
  return { rest: elsewhere, openapi: elsewhere, client: elsewhere, mcp, audit }
}

export const listed = async (cell: Cell) =>
  ((await cell.rest('GET', `${path}?per_page=100`)).body.data as Array<{ id: unknown }>).map(
    (d) => d.id,
  )

/** Scaffolds the documents app with `make:api`, starts it on `backend`, trashes one record. */
export async function openCell(
  backend: DatabaseBackend,
): Promise<{ cell: Cell; close(): Promise<void> }> {
  const scaffolded: ScaffoldedApp = await scaffoldApp(backend.dialect, {
    app: TRASH[backend.dialect],
  })
  addRowFilter(scaffolded.outDir)
  const cell = {} as Cell
  cell.api = await startGeneratedApi(scaffolded, backend)
  const controller = await import(join(scaffolded.outDir, 'controllers/documents.ts'))
  cell.definition = controller.documentsResource as ResourceDefinition
  const keys = new Map<string, string>()
  cell.rest = async (method, route, body, scopes) => {
    let headers: Record<string, string> = {}
    if (scopes) {
      const name = scopes.join(' ')
      if (!keys.has(name)) {
        keys.set(name, (await createApiKey(cell.api.database, { name, scopes })).rawKey)
      }
      headers = { authorization: `Bearer ${keys.get(name)}` }
    }
    const response = await cell.api.request(method, route, body, headers)
    return { status: response.status, body: (await response.json()) as Json }
  }
  cell.doc = (await (await cell.api.app.request('/api/openapi.json')).json()) as OpenApi
  cell.client = generateApiClient(cell.doc)
  cell.operation = (operationId) => {
    for (const item of Object.values(cell.doc.paths)) {
      for (const operation of Object.values(item)) {
        if (operation.operationId === operationId) return operation
      }
    }
    throw new Error(`no operation ${operationId}`)
  }
  const made = await cell.rest('POST', path, [
    { title: 'Live 1' },
    { title: 'Live 2' },
    { title: 'Trashed' },
    { title: HIDDEN },
  ])
  const docs = made.body.data as Array<{ id: string | number; title: string }>
  cell.trashed = docs[2]!
  cell.hidden = docs[3]!
  expect((await cell.rest('DELETE', `${path}/${cell.trashed.id}`)).status).toBe(200)
  // The app's own schema module: its tables are the ones the definitions hold.
  const schema = await import(join(scaffolded.root, 'src/schema.ts'))
  const audit = createAuditTrail({ database: cell.api.database, flushIntervalMs: 3_600_000 })
  cell.audited = async (tool) => {
    await audit.flush()
    const entries = await createAuditLog(cell.api.database).list({ limit: 200 })
    return entries.filter((entry) => entry.tool === tool)
  }
  const tools = createDataTools({
    audit,
    database: cell.api.database,
    models: createModelRegistry(schema, backend.dialect),
    access: { unlisted: 'all', approval: [] },
    // The app's definitions, as the MCP module init:mcp writes passes them.
    queries: { documents: cell.definition },
    logger: silentLogger(),
  })
  cell.mcp = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  return {
    cell,
    async close() {
      await cell.mcp?.close()
      await audit.close()
      await cell.api?.close()
      scaffolded.cleanup()
    },
  }
}

/** The documented operations of each resource operation (update answers PUT and PATCH). */
export const OPERATION_IDS: Record<string, string[]> = {
  index: ['listDocuments'],
  show: ['showDocument'],
  aggregate: ['aggregateDocuments'],
  events: ['watchDocuments'],
  store: ['createDocument'],
  update: ['updateDocument', 'patchDocument'],
  destroy: ['deleteDocument'],
  updateMany: ['updateDocuments'],
  destroyMany: ['deleteDocuments'],
  restore: ['restoreDocument'],
}

/** One exported interface or type of the typed client, as its source has it. */
export function clientBlock(cell: Cell, name: string): string {
  const start = cell.client.search(new RegExp(`export (interface|type) ${name}\\b`))
  if (start < 0) throw new Error(`the typed client has no ${name}`)
  return cell.client.slice(start, cell.client.indexOf('\n}\n', start) + 2)
}

/** The typed client's method of the resource, by its name (`list`, `restore`…). */
export function clientMethod(cell: Cell, name: string): string {
  const resource = cell.client.slice(cell.client.indexOf('    documents: {'))
  const line = new RegExp(`^      ${name}: \\(.*$`, 'm').exec(resource)
  if (!line) throw new Error(`the typed client has no documents.${name}`)
  return line[0]
}

/** The title the documents' row filter hides from every key. */
export const HIDDEN = 'Hidden by the row filter'

/** The documents' row filter, added to the generated definition as an app would. */
function addRowFilter(outDir: string): void {
  const file = join(outDir, 'controllers/documents.ts')
  const source = readFileSync(file, 'utf8')
  const rows = `  rows: () => ({ where: ne(documents.title, '${HIDDEN}'), key: 'not-hidden' }),`
  const patched = source
    .replace(
      "import { Hono } from 'hono'",
      "import { ne } from 'drizzle-orm'\nimport { Hono } from 'hono'",
    )
    .replace(/(= defineResource\(documents, \{\n)/, `$1${rows}\n`)
  if (!patched.includes('rows: ()') || !patched.includes('import { ne }')) {
    throw new Error('the documents controller changed')
  }
  writeFileSync(file, patched)
}
