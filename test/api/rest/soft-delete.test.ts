import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey } from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  TRASH,
} from './generated-app.ts'

type Json = Record<string, unknown>
type Doc = { id: string | number; title: string; deleted_at: string | null }

describeEachDatabase('generated REST API: soft delete (a deleted_at column)', (backend) => {
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
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  async function send(method: string, path: string, body?: unknown, headers?: Json) {
    const response = await api.request(method, path, body, headers as Record<string, string>)
    return { response, status: response.status, body: (await response.json()) as Json }
  }

  async function create(...titles: string[]): Promise<Doc[]> {
    const { status, body } = await send(
      'POST',
      '/api/v1/documents',
      titles.map((title) => ({ title })),
    )
    expect(status).toBe(201)
    return body.data as Doc[]
  }

  async function list(query = '', headers?: Json): Promise<{ status: number; body: Json }> {
    const { status, body } = await send(
      'GET',
      `/api/v1/documents?per_page=100${query}`,
      undefined,
      headers,
    )
    return { status, body }
  }

  const idsOf = (body: Json) => (body.data as Doc[]).map((doc) => doc.id)

  it('DELETE sets deleted_at: show, update and a second delete answer 404; the row stays', async () => {
    const [doc] = await create('Draft')
    const deleted = await send('DELETE', `/api/v1/documents/${doc!.id}`)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ message: 'Deleted' })
    expect((await send('GET', `/api/v1/documents/${doc!.id}`)).status).toBe(404)
    expect((await send('PATCH', `/api/v1/documents/${doc!.id}`, { title: 'x' })).status).toBe(404)
    expect((await send('DELETE', `/api/v1/documents/${doc!.id}`)).status).toBe(404)
    const only = await list('&filter[trashed]=only')
    const trashed = (only.body.data as Doc[]).find((d) => d.id === doc!.id)
    expect(trashed?.title).toBe('Draft')
    expect(trashed?.deleted_at).toEqual(expect.any(String))
  })

  it('lists hide trashed records; filter[trashed]=with shows them too, only shows only them', async () => {
    const [kept, gone] = await create('Kept', 'Gone')
    await send('DELETE', `/api/v1/documents/${gone!.id}`)
    const plain = await list()
    expect(idsOf(plain.body)).toContain(kept!.id)
    expect(idsOf(plain.body)).not.toContain(gone!.id)
    expect((plain.body.data as Doc[]).every((d) => d.deleted_at === null)).toBe(true)
    const all = await list('&filter[trashed]=with')
    expect(idsOf(all.body)).toEqual(expect.arrayContaining([kept!.id, gone!.id]))
    const only = await list('&filter[trashed]=only')
    expect(idsOf(only.body)).toContain(gone!.id)
    expect(idsOf(only.body)).not.toContain(kept!.id)
    const total = (body: Json) => (body.meta as { total: number }).total
    expect(total(all.body)).toBe(total(plain.body) + total(only.body))
    // The parameter is kept in the page links.
    const paged = await send('GET', '/api/v1/documents?per_page=1&filter[trashed]=with')
    expect((paged.body.links as { next: string }).next).toMatch(
      /filter(\[|%5B)trashed(\]|%5D)=with/,
    )
  })

  it('filter[trashed] needs the write scope (403) and one of its two values (422)', async () => {
    expect((await list('', reader)).status).toBe(200)
    const refused = await list('&filter[trashed]=with', reader)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('This API key lacks the scope documents:write')
    const bad = await list('&filter[trashed]=yes')
    expect(bad.status).toBe(422)
    expect(bad.body.errors).toEqual({ 'filter[trashed]': ['must be "with" or "only"'] })
  })

  it('POST /{id}/restore brings a record back; 404 for an unknown one; needs write', async () => {
    const [doc] = await create('Back')
    await send('DELETE', `/api/v1/documents/${doc!.id}`)
    const refused = await send('POST', `/api/v1/documents/${doc!.id}/restore`, undefined, reader)
    expect(refused.status).toBe(403)
    const restored = await send('POST', `/api/v1/documents/${doc!.id}/restore`)
    expect(restored.status).toBe(200)
    expect(restored.body.data).toMatchObject({ id: doc!.id, title: 'Back', deleted_at: null })
    expect((await send('GET', `/api/v1/documents/${doc!.id}`)).status).toBe(200)
    // Restoring a record that is not in the trash changes nothing.
    expect((await send('POST', `/api/v1/documents/${doc!.id}/restore`)).status).toBe(200)
    const unknown =
      backend.dialect === 'postgres' ? '00000000-0000-4000-8000-000000000000' : '999999'
    expect((await send('POST', `/api/v1/documents/${unknown}/restore`)).status).toBe(404)
  })

  it('bulk delete trashes all or none; bulk update skips trashed records (404)', async () => {
    const [a, b, c] = await create('A', 'B', 'C')
    await send('DELETE', `/api/v1/documents/${c!.id}`)
    const mixed = await send('DELETE', `/api/v1/documents?ids=${a!.id},${c!.id}`)
    expect(mixed.status).toBe(404)
    expect(mixed.body.error).toBe('Not Found: no record has the id at index 1')
    expect((await send('GET', `/api/v1/documents/${a!.id}`)).status).toBe(200)
    const update = await send('PATCH', '/api/v1/documents', [
      { id: a!.id, title: 'A2' },
      { id: c!.id, title: 'C2' },
    ])
    expect(update.status).toBe(404)
    expect(((await send('GET', `/api/v1/documents/${a!.id}`)).body.data as Doc).title).toBe('A')
    const both = await send('DELETE', `/api/v1/documents?ids=${a!.id},${b!.id}`)
    expect(both.body).toEqual({ message: 'Deleted', count: 2 })
    const only = await list('&filter[trashed]=only')
    expect(idsOf(only.body)).toEqual(expect.arrayContaining([a!.id, b!.id, c!.id]))
  })

  it('include= leaves trashed records out, as their own list does', async () => {
    const folder = await send('POST', '/api/v1/folders', { name: 'Inbox' })
    expect(folder.status).toBe(201)
    const folderId = (folder.body.data as { id: number }).id
    const docs = await send('POST', '/api/v1/documents', [
      { title: 'Stays', folder_id: folderId },
      { title: 'Trashed', folder_id: folderId },
    ])
    const [stays, trashed] = docs.body.data as Doc[]
    await send('DELETE', `/api/v1/documents/${trashed!.id}`)
    const { status, body } = await send(
      'GET',
      `/api/v1/folders?include=documents&filter[id]=${folderId}`,
    )
    expect(status).toBe(200)
    const [listed] = body.data as Array<{ documents: Doc[] }>
    expect(listed!.documents.map((doc) => doc.id)).toEqual([stays!.id])
  })

  it('deleted_at is never written by a request', async () => {
    const { status, body } = await send('POST', '/api/v1/documents', {
      title: 'Sneaky',
      deleted_at: new Date().toISOString(),
    })
    expect(status).toBe(422)
    expect(body.errors).toEqual({ deleted_at: ['is not a known field'] })
  })
})

describe('soft delete in the generated OpenAPI document', () => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi

  beforeAll(async () => {
    scaffolded = await scaffoldApp('sqlite', { app: TRASH.sqlite })
    const { databaseBackends } = await import('../../support/databases.ts')
    api = await startGeneratedApi(scaffolded, databaseBackends.find((b) => b.name === 'sqlite')!)
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  it('documents the restore route and filter[trashed], valid under swagger-parser', async () => {
    const doc = (await (await api.app.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId: string; parameters?: Json[] }>>
    }
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
    expect(doc.paths['/api/v1/documents/{id}/restore']?.post?.operationId).toBe('restoreDocument')
    const names = (doc.paths['/api/v1/documents']?.get?.parameters ?? []).map((p) => p.name)
    expect(names).toContain('filter[trashed]')
  })
})
