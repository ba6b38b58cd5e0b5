import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type SQL, sql } from 'drizzle-orm'
import { expect } from 'vitest'
import { createApiKey, generateApiClient } from '../../../src/api/index.ts'
import type { ResourceDefinition } from '../../../src/api/resource/index.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { type AuditRecord, createAuditLog, createModelRegistry } from '../../../src/db/index.ts'
import {
  createAuditTrail,
  createDataTools,
  createMcpServer,
  type DataTools,
} from '../../../src/mcp/index.ts'
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
  /**
   * An MCP client of tools under the default approval policy, acting for a signed-in user:
   * what needs a person's approval waits for it there (`heldTools.approvals` decides).
   */
  held: Client
  heldTools: DataTools
  /** The audit trail's entries of one MCP tool, newest first (the trail flushed first). */
  audited(tool: string): Promise<AuditRecord[]>
  trashed: { id: string | number; title: string }
  /** A record the documents' row filter hides from every key. */
  hidden: { id: string | number; title: string }
  /** Gives every document the credential's value again (`SECRET`). */
  keepSecret(): Promise<void>
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
  const app = withCredential(backend.dialect)
  const scaffolded: ScaffoldedApp = await scaffoldApp(backend.dialect, { app })
  rmSync(app.root, { recursive: true, force: true })
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
  await fileEveryDocument(cell)
  cell.keepSecret = () => run(cell, sql`update documents set api_token = ${SECRET}`)
  await cell.keepSecret()
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
  cell.heldTools = createDataTools({
    audit,
    database: cell.api.database,
    models: createModelRegistry(schema, backend.dialect),
    access: { unlisted: 'all' },
    queries: { documents: cell.definition },
    approvals: { pageUrl: (id) => `http://app.test/approvals/${id}` },
    logger: silentLogger(),
  })
  const caller = { userId: '1', scopes: ['mcp:read', 'mcp:write'] }
  cell.held = await connectInMemory(
    createMcpServer({ dataTools: { tools: cell.heldTools, caller } }),
  )
  return {
    cell,
    async close() {
      await cell.mcp?.close()
      await cell.held?.close()
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

/** The value of the documents' credential column: no surface may ever show it, nor its name. */
export const SECRET = 'tok_never_leaves_the_server'
export const CREDENTIAL = 'api_token'

/**
 * The trash app with a credential column on documents (`api_token`, a `*_token` name): its
 * schema and migrations copied and given the column, as an app adds one.
 */
function withCredential(dialect: 'postgres' | 'sqlite') {
  const from = TRASH[dialect]
  // Copied from here into the scaffolded app, which lives under the repository.
  const root = mkdtempSync(join(tmpdir(), 'kiln-credential-'))
  const schema = join(root, 'schema.ts')
  const line = /^(\s*)deletedAt: (.*)$/m
  const source = readFileSync(from.schema, 'utf8')
  if (!line.test(source)) throw new Error('the trash fixture changed')
  writeFileSync(schema, source.replace(line, `$&\n$1apiToken: text('${CREDENTIAL}'),`))
  const migrations = join(root, 'migrations')
  cpSync(from.migrations, migrations, { recursive: true })
  const quote = dialect === 'postgres' ? '"' : '`'
  writeFileSync(
    join(migrations, '0002_credential.sql'),
    `ALTER TABLE ${quote}documents${quote} ADD COLUMN ${quote}${CREDENTIAL}${quote} text;\n`,
  )
  return { root, schema, migrations }
}

/** One folder holds every document, for `include=`. */
async function fileEveryDocument(cell: Cell): Promise<void> {
  const folder = await cell.rest('POST', '/api/v1/folders', { name: 'Holds every document' })
  expect(folder.status).toBe(201)
  const folderId = (folder.body.data as { id: number }).id
  await run(cell, sql`update documents set folder_id = ${folderId}`)
}

async function run(cell: Cell, statement: SQL): Promise<void> {
  const database = cell.api.database
  if (database.dialect === 'postgres') await database.db.execute(statement)
  else database.db.run(statement)
}
