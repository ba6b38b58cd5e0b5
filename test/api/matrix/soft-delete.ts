import { expect } from 'vitest'
import { call } from '../../mcp/support/client.ts'
import {
  type Cell,
  clientBlock,
  clientMethod,
  type Json,
  listed,
  na,
  path,
  type Row,
  toolRow,
} from './cell.ts'
import { streamed } from './stream.ts'

const count = async (cell: Cell, query = '') =>
  (
    (await cell.rest('GET', `${path}/aggregate?count=*${query}`)).body.data as Array<{
      count: number
    }>
  )[0]!.count

const trashedParameter = (operationId: string) => async (cell: Cell) =>
  expect((cell.operation(operationId).parameters ?? []).map((p) => p.name)).toContain(
    'filter[trashed]',
  )

const notAudited = na('REST calls are not in the audit trail, which records MCP tool calls')
const recorded = na('the trail records the call as made; soft delete changes what it finds')

/** The soft-delete declaration (a `deleted_at` column): trashed records are out of sight. */
export const SOFT_DELETE: Record<string, Row> = {
  index: {
    rest: async (cell) => expect(await listed(cell)).not.toContain(cell.trashed.id),
    openapi: trashedParameter('listDocuments'),
    client: async (cell) =>
      expect(clientBlock(cell, 'DocumentsListQuery')).toContain('"filter[trashed]"?:'),
    mcp: na('crud_list is a row of its own'),
    audit: notAudited,
  },
  aggregate: {
    rest: async (cell) => {
      expect(await count(cell)).toBe((await listed(cell)).length)
      expect(await count(cell, '&filter[trashed]=with')).toBe((await listed(cell)).length + 1)
    },
    openapi: trashedParameter('aggregateDocuments'),
    client: async (cell) =>
      expect(clientBlock(cell, 'DocumentsAggregateQuery')).toContain('"filter[trashed]"?:'),
    mcp: na('crud_aggregate is a row of its own'),
    audit: notAudited,
  },
  events: {
    rest: async (cell) => {
      // The trashed record's last event says it left every read; nothing shows it after.
      const own = (await streamed(cell)).filter((event) => event.data.id === cell.trashed.id)
      expect(own.at(-1)?.event).toBe('deleted')
    },
    openapi: async (cell) => {
      const names = (cell.operation('watchDocuments').parameters ?? []).map((p) => p.name)
      expect(names).not.toContain('filter[trashed]')
      const text = JSON.stringify(cell.operation('watchDocuments'))
      expect(text).toContain('"restored"')
    },
    client: async (cell) => expect(clientBlock(cell, 'DocumentsEvent')).toContain('"restored"'),
    mcp: na('an MCP subscription is notified of a delete; the tools have rows of their own'),
    audit: notAudited,
  },
  show: {
    rest: async (cell) =>
      expect((await cell.rest('GET', `${path}/${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a trashed record is a 404, which the operation documents'),
    client: na('the 404 is in the answer type the document gives'),
    mcp: na('no MCP tool shows one record'),
    audit: notAudited,
  },
  store: {
    rest: na('a new record is never in the trash; deleted_at is not writable (rest/soft-delete)'),
    openapi: na('the create request has no deleted_at field'),
    client: na('the create body is the document’s request schema'),
    mcp: na('crud_create is a row of its own'),
    audit: notAudited,
  },
  update: {
    rest: async (cell) => {
      for (const method of ['PUT', 'PATCH']) {
        const answer = await cell.rest(method, `${path}/${cell.trashed.id}`, { title: 'x' })
        expect(answer.status, method).toBe(404)
      }
    },
    openapi: na('a 404, documented'),
    client: na('the 404 is in the answer type the document gives'),
    mcp: na('crud_update is a row of its own'),
    audit: notAudited,
  },
  destroy: {
    rest: async (cell) =>
      expect((await cell.rest('DELETE', `${path}/${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a 404, documented'),
    client: na('the 404 is in the answer type the document gives'),
    mcp: na('crud_delete is a row of its own'),
    audit: notAudited,
  },
  updateMany: {
    rest: async (cell) =>
      expect((await cell.rest('PATCH', path, [{ id: cell.trashed.id, title: 'x' }])).status).toBe(
        404,
      ),
    openapi: na('a 404 naming the index, documented'),
    client: na('the 404 is in the answer type the document gives'),
    mcp: na('no bulk MCP tool'),
    audit: notAudited,
  },
  destroyMany: {
    rest: async (cell) =>
      expect((await cell.rest('DELETE', `${path}?ids=${cell.trashed.id}`)).status).toBe(404),
    openapi: na('a 404 naming the index, documented'),
    client: na('the 404 is in the answer type the document gives'),
    mcp: na('no bulk MCP tool'),
    audit: notAudited,
  },
  restore: {
    rest: async (cell) => {
      // Restoring a live record leaves it as it is; the trashed one is restored in its own suite.
      const [live] = await listed(cell)
      expect((await cell.rest('POST', `${path}/${live}/restore`)).status).toBe(200)
    },
    openapi: async (cell) =>
      expect((cell.operation('restoreDocument').parameters ?? []).map((p) => p.name)).toContain(
        'id',
      ),
    client: async (cell) => expect(clientMethod(cell, 'restore')).toMatch(/^ {6}restore: \(id: /),
    mcp: na('no restore MCP tool'),
    audit: notAudited,
  },
  crud_list: toolRow(async (cell) => {
    const page = await call(cell.mcp, 'crud_list', { model: 'documents', per_page: 100 })
    const ids = (page.json as { records: Array<{ id: unknown }> }).records.map((r) => r.id)
    expect(ids).not.toContain(cell.trashed.id)
  }),
  crud_aggregate: toolRow(async (cell) => {
    const answer = await call(cell.mcp, 'crud_aggregate', {
      model: 'documents',
      group_by: ['title'],
    })
    const titles = (answer.json as { data: Array<{ group: Json }> }).data.map((g) => g.group.title)
    expect(titles).not.toContain(cell.trashed.title)
    expect(titles.length).toBe((await listed(cell)).length)
  }),
  crud_create: toolRow(async (cell) => {
    const made = await call(cell.mcp, 'crud_create', {
      model: 'documents',
      data: { title: 'Matrix', deleted_at: new Date().toISOString() },
    })
    expect(made.text).toMatch(/deleted_at/)
  }, recorded),
  crud_update: toolRow(async (cell) => {
    const changed = await call(cell.mcp, 'crud_update', {
      model: 'documents',
      id: cell.trashed.id,
      data: { title: 'x' },
    })
    expect(changed.text).toMatch(/No documents record/)
  }, recorded),
  crud_delete: toolRow(async (cell) => {
    const again = await call(cell.mcp, 'crud_delete', { model: 'documents', id: cell.trashed.id })
    expect(again.isError).toBe(true)
  }, recorded),
}
