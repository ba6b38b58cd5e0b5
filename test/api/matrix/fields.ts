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

const keysOf = (records: unknown) => [
  ...new Set((records as Json[]).flatMap((record) => Object.keys(record))),
]

const fullRecord = na('a write answers the whole record its request schema made')
const notAudited = na('REST calls are not in the audit trail, which records MCP tool calls')
const readable = (cell: Cell) => cell.definition.fields.map((field) => field.name)

/** The client's `fields?:` takes the readable fields, each one and no other. */
const typedFields = (type: string) => async (cell: Cell) => {
  const union = `(${readable(cell)
    .map((name) => `"${name}"`)
    .join(' | ')})`
  expect(clientBlock(cell, type)).toContain(`fields?: ${union} | readonly ${union}[]`)
}

/** The operation's `fields` parameter enumerates the readable fields. */
const documentedFields = (operationId: string) => async (cell: Cell) => {
  const parameter = cell.operation(operationId).parameters?.find((p) => p.name === 'fields')
  expect(parameter, `${operationId} documents fields=`).toBeDefined()
  const text = JSON.stringify(parameter)
  for (const name of readable(cell)) expect(text).toContain(`"${name}"`)
}

const writeRow = (mcp: string): Row => ({
  rest: fullRecord,
  openapi: na('the answer schema is the whole record'),
  client: na('the answer type is the whole record'),
  mcp: na(mcp),
  audit: notAudited,
})

/** The readable fields (`fields`): what `fields=` picks from, and nothing else. */
export const FIELDS: Record<string, Row> = {
  index: {
    rest: async (cell) => {
      const page = await cell.rest('GET', `${path}?fields=title`)
      expect(keysOf(page.body.data)).toEqual(['title'])
      expect((await cell.rest('GET', `${path}?fields=nope`)).status).toBe(422)
    },
    openapi: documentedFields('listDocuments'),
    client: typedFields('DocumentsListQuery'),
    mcp: na('crud_list is a row of its own'),
    audit: notAudited,
  },
  show: {
    rest: async (cell) => {
      const [id] = await listed(cell)
      const one = await cell.rest('GET', `${path}/${id}?fields=title`)
      expect(keysOf([one.body.data])).toEqual(['title'])
      expect((await cell.rest('GET', `${path}/${id}?fields=nope`)).status).toBe(422)
    },
    openapi: documentedFields('showDocument'),
    client: async (cell) => {
      expect(clientMethod(cell, 'show')).toContain('query?: DocumentsShowQuery')
      await typedFields('DocumentsShowQuery')(cell)
    },
    mcp: na('no MCP tool shows one record'),
    audit: notAudited,
  },
  aggregate: {
    rest: async (cell) => {
      expect((await cell.rest('GET', `${path}/aggregate?count=*&group_by=title`)).status).toBe(200)
      expect((await cell.rest('GET', `${path}/aggregate?count=*&group_by=nope`)).status).toBe(422)
    },
    openapi: async (cell) =>
      expect((cell.operation('aggregateDocuments').parameters ?? []).map((p) => p.name)).toContain(
        'group_by',
      ),
    client: async (cell) =>
      expect(clientBlock(cell, 'DocumentsAggregateQuery')).toMatch(/\bgroup_by\?: /),
    mcp: na('crud_aggregate is a row of its own'),
    audit: notAudited,
  },
  events: {
    rest: async (cell) => {
      const records = (await streamed(cell, 'fields=title'))
        .filter((e) => e.data.data !== undefined)
        .map((e) => e.data.data)
      expect(records.length).toBeGreaterThan(0)
      expect(keysOf(records)).toEqual(['title'])
      expect((await cell.rest('GET', `${path}/events?fields=nope`)).status).toBe(422)
    },
    openapi: documentedFields('watchDocuments'),
    client: typedFields('DocumentsEventsQuery'),
    mcp: na('an MCP subscription is notified with the model resource URI alone: no field'),
    audit: notAudited,
  },
  store: writeRow('crud_create is a row of its own'),
  update: writeRow('crud_update is a row of its own'),
  destroy: {
    ...writeRow('crud_delete is a row of its own'),
    rest: na('a delete answers a message, no fields'),
  },
  updateMany: writeRow('no bulk MCP tool'),
  destroyMany: { ...writeRow('no bulk MCP tool'), rest: na('a delete answers a message') },
  restore: writeRow('no restore MCP tool'),
  crud_list: toolRow(async (cell) => {
    const page = await call(cell.mcp, 'crud_list', { model: 'documents', fields: ['title'] })
    expect(keysOf((page.json as { records: Json[] }).records)).toEqual(['title'])
    const wrong = await call(cell.mcp, 'crud_list', { model: 'documents', fields: ['nope'] })
    expect(wrong.isError).toBe(true)
  }),
  crud_aggregate: toolRow(async (cell) => {
    const wrong = await call(cell.mcp, 'crud_aggregate', {
      model: 'documents',
      group_by: ['nope'],
    })
    expect(wrong.isError).toBe(true)
  }),
  crud_create: toolRow(na('a write answers the whole record'), fullRecord),
  crud_update: toolRow(na('a write answers the whole record'), fullRecord),
  crud_delete: toolRow(na('a delete answers the id it removed'), fullRecord),
}
