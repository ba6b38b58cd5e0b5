import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRecordCounter } from '../../../src/api/index.ts'
import { type ResourceDefinition, resourceOperations } from '../../../src/api/resource/index.ts'
import { runMakeApi } from '../../../src/cli/commands/make-api.ts'
import { NotFoundError } from '../../../src/core/errors.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  RENTALS,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  TRASH,
} from '../rest/generated-app.ts'

type Json = Record<string, unknown>

const repo = resolve(import.meta.dirname, '../../..')

async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json
}

describeEachDatabase('the resource operations kiln implements once', (backend) => {
  describe('show', () => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    let postId: number

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect)
      api = await startGeneratedApi(scaffolded, backend)
      const authorId = await api.createUser()
      const created = await api.request('POST', '/api/v1/posts', {
        title: 'Hello',
        body: 'World',
        author_id: authorId,
      })
      postId = ((await json(created)).data as { id: number }).id
    })
    afterAll(async () => {
      await api?.close()
      scaffolded?.cleanup()
    })

    it('GET /{id}?fields= answers the fields named, as the list does', async () => {
      const response = await api.request('GET', `/api/v1/posts/${postId}?fields=id,title`)
      expect(response.status).toBe(200)
      expect((await json(response)).data).toEqual({ id: postId, title: 'Hello' })
      const list = await api.request('GET', `/api/v1/posts?fields=id,title&filter[id]=${postId}`)
      expect((await json(list)).data).toEqual([{ id: postId, title: 'Hello' }])
    })

    it('a field that is none is a 422 naming it; no fields= gives the whole record', async () => {
      const refused = await api.request('GET', `/api/v1/posts/${postId}?fields=id,nope`)
      expect(refused.status).toBe(422)
      const { errors } = (await json(refused)) as { errors: { fields: string[] } }
      expect(errors.fields[0]).toMatch(/^"nope" is not a field; fields: id, title/)
      const whole = (await json(await api.request('GET', `/api/v1/posts/${postId}`))).data
      expect(Object.keys(whole as Json)).toEqual(expect.arrayContaining(['id', 'title', 'body']))
    })
  })

  describe('aggregate, on a soft-deleting resource', () => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect, { app: TRASH[backend.dialect] })
      api = await startGeneratedApi(scaffolded, backend)
    })
    afterAll(async () => {
      await api?.close()
      scaffolded?.cleanup()
    })

    it('counts and groups only what the list shows: never a record in the trash', async () => {
      const created = await api.request(
        'POST',
        '/api/v1/documents',
        ['kept', 'also kept', 'secret plan'].map((title) => ({ title })),
      )
      const docs = (await json(created)).data as Array<{ id: string | number; title: string }>
      const trashed = docs.find((doc) => doc.title === 'secret plan')!
      expect((await api.request('DELETE', `/api/v1/documents/${trashed.id}`)).status).toBe(200)
      const list = await json(await api.request('GET', '/api/v1/documents'))
      expect((list.meta as { total: number }).total).toBe(2)
      const counted = await json(await api.request('GET', '/api/v1/documents/aggregate?count=*'))
      expect(JSON.stringify(counted)).toContain('"count":2')
      const grouped = await api.request('GET', '/api/v1/documents/aggregate?count=*&group_by=title')
      expect(grouped.status).toBe(200)
      expect(JSON.stringify(await json(grouped))).not.toContain('secret plan')
    })

    it("a write call with its input (the MCP tools') writes as the REST route does, no body read", async () => {
      const controller = await import(join(scaffolded.outDir, 'controllers/documents.ts'))
      const definition = controller.documentsResource as ResourceDefinition
      const { store, update, destroy } = resourceOperations(definition, {
        db: api.database.db,
        counts: createRecordCounter(),
      })
      const made = (await store({ caller: undefined, input: { title: 'by input' } })).data as Json
      // kiln's timestamps, from one reading, as on REST.
      expect(made).toMatchObject({ title: 'by input' })
      expect(made.created_at).toEqual(made.updated_at)
      const id = String(made.id)
      const changed = await update({ caller: undefined, id, input: { title: 'changed' } })
      expect(changed.data).toMatchObject({ id: made.id, title: 'changed' })
      expect(await destroy({ caller: undefined, id })).toEqual({ message: 'Deleted' })
      // Soft-deleted, as the route deletes: out of sight, in the trash.
      expect((await api.request('GET', `/api/v1/documents/${id}`)).status).toBe(404)
      const trash = await api.request('GET', '/api/v1/documents?filter[trashed]=only')
      expect(JSON.stringify(await json(trash))).toContain('changed')
      await expect(update({ caller: undefined, id, input: { title: 'x' } })).rejects.toThrow(
        NotFoundError,
      )
    })
  })

  describe('relations follow the schema', () => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    const lines: string[] = []
    const rentals = RENTALS[backend.dialect]
    const toolsOnly = join(repo, 'tmp', `tools-only-${randomBytes(4).toString('hex')}.ts`)

    beforeAll(async () => {
      // An app generated when its schema had tools only; then bookings were added to the
      // schema and make:api ran again for them.
      const schema = readFileSync(rentals.schema, 'utf8')
      writeFileSync(toolsOnly, schema.slice(0, schema.indexOf('export const bookings')))
      scaffolded = await scaffoldApp(backend.dialect, {
        app: { schema: toolsOnly, migrations: rentals.migrations },
      })
      writeFileSync(join(scaffolded.root, 'src/schema.ts'), schema)
      await runMakeApi({
        cwd: scaffolded.root,
        models: ['Booking'],
        yes: true,
        print: (line) => lines.push(line),
      })
      api = await startGeneratedApi(scaffolded, backend)
    })
    afterAll(async () => {
      await api?.close()
      scaffolded?.cleanup()
      rmSync(toolsOnly, { force: true })
    })

    it('the existing resource includes the new model, its controller untouched', async () => {
      const tool = await api.request('POST', '/api/v1/tools', {
        name: 'Drill',
        daily_rate: '12.50',
      })
      expect(tool.status).toBe(201)
      const toolId = ((await json(tool)).data as { id: number }).id
      const booked = { tool_id: toolId, starts_on: '2026-01-02' }
      expect((await api.request('POST', '/api/v1/bookings', booked)).status).toBe(201)
      const response = await api.request(
        'GET',
        `/api/v1/tools?include=bookings&filter[id]=${toolId}`,
      )
      expect(response.status).toBe(200)
      const [found] = (await json(response)).data as Array<{ bookings: Array<{ tool_id: number }> }>
      expect(found!.bookings.map((booking) => booking.tool_id)).toEqual([toolId])
      const tools = await api.request('GET', '/api/v1/bookings?include=tool')
      expect(tools.status).toBe(200)
    })

    it('make:api says what the existing controller gained, and that it left the file alone', () => {
      const text = stripVTControlCharacters(lines.join('\n'))
      expect(text).toMatch(
        /controllers\/tools\.ts includes bookings now: .*foreign keys \(the file is left as it is\)/,
      )
    })
  })
})
