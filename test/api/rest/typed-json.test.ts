import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { jsonb, pgTable, serial } from 'drizzle-orm/pg-core'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { generateApiClient } from '../../../src/api/index.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, typedJson } from '../../../src/db/index.ts'
import { jsonSchemaOf } from '../../../src/db/models/json-schemas.ts'
import { createCrud, ToolError } from '../../../src/mcp/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { redoclyLint } from '../openapi/lint.ts'
import {
  KITCHEN_SINK,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './generated-app.ts'

const repo = resolve(import.meta.dirname, '../../..')

/** The kitchen-sink schema with `group.settings` typed by a zod schema (same tables, same DDL). */
function typedKitchenSink(dialect: 'postgres' | 'sqlite'): { schema: string; migrations: string } {
  const source = readFileSync(KITCHEN_SINK[dialect].schema, 'utf8')
  const untyped =
    dialect === 'postgres'
      ? "jsonb('settings').$type<{ color: string; size?: number }>()"
      : "blob('settings', { mode: 'json' }).$type<{ color: string; size?: number }>()"
  const typed =
    dialect === 'postgres'
      ? "typedJson(jsonb('settings'), Settings)"
      : "typedJson(blob('settings', { mode: 'json' }), Settings)"
  expect(source).toContain(untyped)
  const schema = `import { typedJson } from 'kilnjs/db'
import { z } from 'zod'
${source.replace(untyped, typed).replace(
  /\nexport const group = /,
  `
const Settings = z.strictObject({
  color: z.string().regex(/^#[0-9a-f]{6}$/),
  size: z.int().min(1).optional(),
})

export const group = `,
)}`
  const file = join(repo, 'tmp', `typed-json-${dialect}-${process.pid}.ts`)
  writeFileSync(file, schema)
  return { schema: file, migrations: KITCHEN_SINK[dialect].migrations }
}

describe('typedJson', () => {
  const Settings = z.strictObject({ color: z.string() })
  const table = pgTable('boxes', {
    id: serial('id').primaryKey(),
    settings: typedJson(jsonb('settings'), Settings).notNull(),
    loose: jsonb('loose'),
  })

  it('types the column as the schema output and finds the schema on the built column', () => {
    const row: typeof table.$inferInsert = { settings: { color: 'red' } }
    // @ts-expect-error: a number is no colour
    const wrong: typeof table.$inferInsert = { settings: { color: 1 } }
    expect([row, wrong]).toHaveLength(2)
    expect(jsonSchemaOf(table.settings)).toBe(Settings)
    expect(jsonSchemaOf(table.loose)).toBeUndefined()
    const registry = createModelRegistry({ table }, 'postgres')
    const columns = registry.models[0]!.columns
    expect(columns.find((c) => c.name === 'settings')?.jsonSchema).toBe(Settings)
    expect(columns.find((c) => c.name === 'loose')).not.toHaveProperty('jsonSchema')
  })

  it('refuses what is not a column builder', () => {
    expect(() => typedJson(null as never, Settings)).toThrow(/column builder/)
  })
})

describeEachDatabase('typed JSON columns: REST, MCP and OpenAPI check one schema', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: typedKitchenSink(backend.dialect) })
    api = await startGeneratedApi(scaffolded, backend)
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  const body = async (response: Response) => (await response.json()) as Record<string, unknown>

  it('the generated request and resource pass the column to jsonValue', () => {
    const request = readFileSync(join(scaffolded.outDir, 'requests/group.ts'), 'utf8')
    expect(request).toMatch(/settings: jsonValue<NewGroup\['settings'\]>\(group\.settings\)/)
    const resource = readFileSync(join(scaffolded.outDir, 'resources/group.ts'), 'utf8')
    expect(resource).toContain('settings: jsonValue(group.settings)')
  })

  it('REST: a value off the schema is a 422 naming its path, and nothing is written', async () => {
    const bad = await api.request('POST', '/api/v1/groups', {
      slug: 'red',
      title: 'Red',
      settings: { color: 'red', size: 0, shade: 'dark' },
    })
    expect(bad.status).toBe(422)
    const { errors } = (await body(bad)) as { errors: Record<string, string[]> }
    expect(Object.keys(errors).sort()).toEqual([
      'settings.color',
      'settings.shade',
      'settings.size',
    ])
    expect(errors['settings.shade']).toEqual(['is not a known field'])
    expect((await api.request('GET', '/api/v1/groups/red')).status).toBe(404)

    const good = await api.request('POST', '/api/v1/groups', {
      slug: 'red',
      title: 'Red',
      settings: { color: '#ff0000', size: 2 },
    })
    expect(good.status).toBe(201)
    expect((await body(good)).data).toMatchObject({ settings: { color: '#ff0000', size: 2 } })

    const update = await api.request('PUT', '/api/v1/groups/red', { settings: { size: 3 } })
    expect(update.status).toBe(422)
    expect(Object.keys(((await body(update)) as { errors: object }).errors)).toEqual([
      'settings.color',
    ])
    const shown = await api.request('GET', '/api/v1/groups/red')
    expect((await body(shown)).data).toMatchObject({ settings: { color: '#ff0000', size: 2 } })
    // The column is nullable: null passes.
    const cleared = await api.request('PUT', '/api/v1/groups/red', { settings: null })
    expect(cleared.status).toBe(200)
    expect((await body(cleared)).data).toMatchObject({ settings: null })
  })

  it('MCP: crud_create and crud_update check the same schema, naming the path', async () => {
    const schema = (await import(typedKitchenSink(backend.dialect).schema)) as Record<
      string,
      unknown
    >
    const crud = createCrud({
      database: api.database,
      models: createModelRegistry(schema, backend.dialect),
      access: { unlisted: 'all' },
      logger: silentLogger(),
    })
    const attempt = crud.create({
      model: 'group',
      data: { slug: 'blue', title: 'Blue', settings: { color: 'blue', x: 1 } },
    })
    await expect(attempt).rejects.toBeInstanceOf(ToolError)
    await expect(attempt).rejects.toThrow(/settings: color: [^,;]+, x: is not a known field$/)
    expect((await crud.list({ model: 'group', filters: { slug: 'blue' } })).total).toBe(0)
    const created = await crud.create({
      model: 'group',
      data: { slug: 'blue', title: 'Blue', settings: { color: '#0000ff' } },
    })
    expect(created).toMatchObject({ settings: { color: '#0000ff' } })
    await expect(
      crud.update({ model: 'group', id: 'blue', data: { settings: { color: '#0000ff', x: 1 } } }),
    ).rejects.toThrow(/settings: x: is not a known field/)
  })

  it('OpenAPI 3.0 and 3.1 show the schema in the record and the request bodies', async () => {
    const doc30 = (await (await api.app.request('/api/openapi.json')).json()) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> }
    }
    const doc31 = (await (await api.app.request('/api/openapi-3.1.json')).json()) as typeof doc30
    for (const name of ['Group', 'CreateGroupRequest', 'UpdateGroupRequest']) {
      const settings30 = doc30.components.schemas[name]?.properties.settings
      expect(settings30, name).toMatchObject({
        type: 'object',
        nullable: true,
        properties: { color: { type: 'string', pattern: '^#[0-9a-f]{6}$' } },
        additionalProperties: false,
      })
      expect(doc31.components.schemas[name]?.properties.settings, name).toMatchObject({
        type: ['object', 'null'],
        properties: { color: { type: 'string' }, size: { type: 'integer', minimum: 1 } },
        required: ['color'],
      })
    }
  })

  it('both documents lint clean, and the generated client types the column by its schema', async () => {
    const doc30 = await (await api.app.request('/api/openapi.json')).json()
    const doc31 = await (await api.app.request('/api/openapi-3.1.json')).json()
    for (const doc of [doc30, doc31]) {
      await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy()
      expect((await redoclyLint(doc)).problems.map((p) => p.ruleId)).toEqual(['info-license'])
    }
    // The filterable JSON field: a typed jsonb on PostgreSQL; on SQLite the tags array is JSON.
    const jsonField = backend.dialect === 'postgres' ? 'settings' : 'tags'
    const dir = join(scaffolded.root, 'front-end')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'api-client.ts'), generateApiClient(doc30))
    writeFileSync(
      join(dir, 'use.ts'),
      `import type { CreateGroupRequest, Group, GroupsListQuery } from './api-client'
export const tagged: GroupsListQuery = { filter: { tags: { contains: ['a', 'b'], overlaps: 'c,d' } } }
export const pathed: GroupsListQuery = {
  filter: { '${jsonField}.color': '#000000', '${jsonField}.size': { in: ['1', '2'] } },
}
export const pathedOr: GroupsListQuery = { filter: { or: [{ '${jsonField}.color': { ne: '#ffffff' } }] } }
// @ts-expect-error: no JSON field is named so
export const misspelledPath: GroupsListQuery = { filter: { 'x${jsonField}.color': 'red' } }
// @ts-expect-error: a path's equality takes text
export const wrongPath: GroupsListQuery = { filter: { '${jsonField}.size': { eq: 1 } } }
export const valid: CreateGroupRequest = { slug: 'a', title: 'A', settings: { color: '#000000' } }
export const cleared: CreateGroupRequest = { slug: 'a', title: 'A', settings: null }
// @ts-expect-error: a colour is a string
export const wrong: CreateGroupRequest = { slug: 'a', title: 'A', settings: { color: 1 } }
// @ts-expect-error: the settings object is strict
export const extra: CreateGroupRequest = { slug: 'a', title: 'A', settings: { color: '', x: 1 } }
export const colour = (group: Group): string | undefined => group.settings?.color
`,
    )
    const program = ts.createProgram([join(dir, 'use.ts')], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Preserve,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      verbatimModuleSyntax: true,
      types: [],
      noEmit: true,
    })
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    rmSync(dir, { recursive: true, force: true })
    expect(problems).toEqual([])
  }, 120_000)
})
