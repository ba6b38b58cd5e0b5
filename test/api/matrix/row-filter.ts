import { expect } from 'vitest'
import { call } from '../../mcp/support/client.ts'
import { type Cell, HIDDEN, type Json, listed, na, path, type Row, toolRow } from './cell.ts'
import { streamed } from './stream.ts'

const perCaller = na('the row filter is the app’s code, run per caller: no parameter to document')
const notAudited = na('REST calls are not in the audit trail, which records MCP tool calls')

/** A REST operation on the hidden record answers 404, as for a record that does not exist. */
const notFound =
  (request: (cell: Cell) => [string, string, unknown?]) =>
  async (cell: Cell): Promise<void> => {
    const [method, route, body] = request(cell)
    expect((await cell.rest(method, route, body)).status).toBe(404)
    expect(await listed(cell)).not.toContain(cell.hidden.id)
  }

const row = (rest: Row['rest'], mcp = 'the MCP tools have rows of their own'): Row => ({
  rest,
  openapi: perCaller,
  client: perCaller,
  mcp: na(mcp),
  audit: notAudited,
})

/** The row filter (`rows`): the records a caller may read or change, on every operation. */
export const ROW_FILTER: Record<string, Row> = {
  index: row(async (cell) => expect(await listed(cell)).not.toContain(cell.hidden.id)),
  aggregate: row(async (cell) => {
    const answer = await cell.rest('GET', `${path}/aggregate?count=*&group_by=title`)
    const titles = (answer.body.data as Array<{ group: Json }>).map((g) => g.group.title)
    expect(titles).not.toContain(HIDDEN)
    expect(titles.length).toBe((await listed(cell)).length)
  }),
  show: row(notFound((cell) => ['GET', `${path}/${cell.hidden.id}`])),
  events: row(async (cell) => {
    const ids = (await streamed(cell)).map((event) => event.data.id)
    expect(ids).toContain((await listed(cell))[0])
    expect(ids).not.toContain(cell.hidden.id)
  }, 'an MCP subscription is notified only of records in its list (test/mcp/subscriptions)'),
  store: row(na('the filter selects existing records; a create selects none')),
  update: row(async (cell) => {
    for (const method of ['PUT', 'PATCH']) {
      await notFound((c) => [method, `${path}/${c.hidden.id}`, { title: 'x' }])(cell)
    }
  }),
  destroy: row(notFound((cell) => ['DELETE', `${path}/${cell.hidden.id}`])),
  updateMany: row(notFound((cell) => ['PATCH', path, [{ id: cell.hidden.id, title: 'x' }]])),
  destroyMany: row(notFound((cell) => ['DELETE', `${path}?ids=${cell.hidden.id}`])),
  restore: row(notFound((cell) => ['POST', `${path}/${cell.hidden.id}/restore`])),
  crud_list: toolRow(async (cell) => {
    const page = await call(cell.mcp, 'crud_list', { model: 'documents', per_page: 100 })
    const ids = (page.json as { records: Array<{ id: unknown }> }).records.map((r) => r.id)
    expect(ids).not.toContain(cell.hidden.id)
  }),
  crud_aggregate: toolRow(async (cell) => {
    const answer = await call(cell.mcp, 'crud_aggregate', {
      model: 'documents',
      group_by: ['title'],
    })
    const titles = (answer.json as { data: Array<{ group: Json }> }).data.map((g) => g.group.title)
    expect(titles).not.toContain(HIDDEN)
  }),
  crud_create: toolRow(
    na('the filter selects existing records; a create selects none'),
    na('a create selects no record'),
  ),
  crud_update: toolRow(async (cell) => {
    const changed = await call(cell.mcp, 'crud_update', {
      model: 'documents',
      id: cell.hidden.id,
      data: { title: 'x' },
    })
    expect(changed.isError).toBe(true)
  }, na('the trail records the call as made; the filter changes what it finds')),
  crud_delete: toolRow(async (cell) => {
    const gone = await call(cell.mcp, 'crud_delete', { model: 'documents', id: cell.hidden.id })
    expect(gone.isError).toBe(true)
    expect(await listed(cell)).not.toContain(cell.hidden.id)
  }, na('the trail records the call as made; the filter changes what it finds')),
}
