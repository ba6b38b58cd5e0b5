import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import ts from 'typescript'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createApiKey, generateApiClient } from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  TRASH,
} from '../rest/generated-app.ts'

const repo = resolve(import.meta.dirname, '../../..')

type Json = Record<string, unknown>
type Group = { group: Json; count?: number; min?: Json; max?: Json }

/**
 * Aggregates keep to the list's soft delete: the generated `GET /aggregate` route passes no
 * soft delete of its own, and kiln still leaves the trash out, counts and titles alike.
 */
describeEachDatabase('REST aggregates on a soft-deleting resource', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let reader: Record<string, string>

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: TRASH[backend.dialect] })
    api = await startGeneratedApi(scaffolded, backend)
    const { rawKey } = await createApiKey(api.database, {
      name: 'reader',
      scopes: ['documents:read'],
    })
    reader = { authorization: `Bearer ${rawKey}` }
    const created = await api.request(
      'POST',
      '/api/v1/documents',
      ['Kept 1', 'Kept 2', 'Kept 3', 'Secret A', 'Secret B'].map((title) => ({ title })),
    )
    const docs = ((await created.json()) as { data: Array<{ id: unknown; title: string }> }).data
    for (const doc of docs.filter((d) => d.title.startsWith('Secret'))) {
      expect((await api.request('DELETE', `/api/v1/documents/${doc.id}`)).status).toBe(200)
    }
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  async function get(path: string, headers?: Record<string, string>) {
    const response = await api.request('GET', path, undefined, headers)
    return { status: response.status, body: (await response.json()) as Json }
  }
  const groups = (body: Json) => body.data as Group[]

  it('count=* counts what the list shows, not the trashed records', async () => {
    const list = await get('/api/v1/documents?per_page=100', reader)
    expect((list.body.meta as { total: number }).total).toBe(3)
    const counted = await get('/api/v1/documents/aggregate?count=*', reader)
    expect(counted.status).toBe(200)
    expect(groups(counted.body)).toEqual([{ group: {}, count: 3 }])
  })

  it('group_by, min and max read no trashed value', async () => {
    const byTitle = await get('/api/v1/documents/aggregate?count=*&group_by=title', reader)
    expect(groups(byTitle.body).map((g) => g.group.title)).toEqual(['Kept 1', 'Kept 2', 'Kept 3'])
    const extremes = await get('/api/v1/documents/aggregate?min=title&max=title', reader)
    expect(groups(extremes.body)[0]).toMatchObject({
      min: { title: 'Kept 1' },
      max: { title: 'Kept 3' },
    })
  })

  it('filter[trashed] on an aggregate: the write scope counts with or only them; read is 403', async () => {
    const refused = await get('/api/v1/documents/aggregate?filter[trashed]=with', reader)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('This API key lacks the scope documents:write')
    const all = await get('/api/v1/documents/aggregate?count=*&filter[trashed]=with')
    expect(groups(all.body)).toEqual([{ group: {}, count: 5 }])
    const only = await get('/api/v1/documents/aggregate?count=*&filter[trashed]=only')
    expect(groups(only.body)).toEqual([{ group: {}, count: 2 }])
    const bad = await get('/api/v1/documents/aggregate?filter[trashed]=yes')
    expect(bad.status).toBe(422)
  })

  it('both OpenAPI documents give the aggregate filter[trashed] and restore an Idempotency-Key', async () => {
    for (const path of ['/api/openapi.json', '/api/openapi-3.1.json']) {
      const doc = (await (await api.app.request(path)).json()) as {
        paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>
      }
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
      const names = (route: string, method: string) =>
        (doc.paths[route]?.[method]?.parameters ?? []).map((p) => p.name)
      expect(names('/api/v1/documents/aggregate', 'get')).toContain('filter[trashed]')
      expect(names('/api/v1/documents/{id}/restore', 'post')).toEqual(['id', 'Idempotency-Key'])
    }
  })

  it('the typed client restores and aggregates, compiled under strict and run against the app', async () => {
    const doc = await (await api.app.request('/api/openapi.json')).json()
    const dir = join(repo, 'tmp', `trash-client-${randomBytes(4).toString('hex')}`)
    mkdirSync(dir, { recursive: true })
    try {
      writeFileSync(join(dir, 'api-client.ts'), generateApiClient(doc))
      writeFileSync(join(dir, 'use.ts'), USE_CLIENT)
      const program = ts.createProgram([join(dir, 'use.ts')], STRICT)
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      expect(problems).toEqual([])
      const use = (await import(join(dir, 'use.ts'))) as {
        run(fetch: typeof globalThis.fetch, apiKey: string): Promise<unknown>
      }
      const viaApp: typeof globalThis.fetch = async (input, init) =>
        api.app.request(String(input).replace('http://app.test', ''), init)
      const key = (await createApiKey(api.database, { name: 'client', scopes: ['*'] })).rawKey
      expect(await use.run(viaApp, key)).toEqual({ before: 3, restored: 'Secret A', after: 4 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** A front end of the documents resource: aggregate, restore a trashed record, aggregate again. */
const USE_CLIENT = `import { createClient } from './api-client'

export async function run(fetch: typeof globalThis.fetch, apiKey: string) {
  const api = createClient({ baseUrl: 'http://app.test', apiKey, fetch })
  const count = async () => {
    const answer = await api.documents.aggregate({ count: '*' })
    if (!answer.ok) throw new Error(\`aggregate: \${answer.status}\`)
    return answer.body.data[0]?.count
  }
  const before = await count()
  const trashed = await api.documents.list({ 'filter[trashed]': 'only', sort: 'title' })
  if (!trashed.ok) throw new Error(\`list: \${trashed.status}\`)
  const first = trashed.body.data[0]
  if (!first) throw new Error('nothing in the trash')
  const restored = await api.documents.restore(first.id)
  if (!restored.ok) throw new Error(\`restore: \${restored.status} \${restored.body.error}\`)
  return { before, restored: restored.body.data.title, after: await count() }
}
`

const STRICT: ts.CompilerOptions = {
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
  skipLibCheck: true,
}
