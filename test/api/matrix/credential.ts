import { expect } from 'vitest'
import type { ResourceOperation } from '../../../src/api/resource/index.ts'
import { call } from '../../mcp/support/client.ts'
import {
  type Cell,
  CREDENTIAL,
  type Json,
  listed,
  na,
  OPERATION_IDS,
  path,
  type Row,
  SECRET,
  toolRow,
} from './cell.ts'
import { streamed } from './stream.ts'

/** Neither the credential's value nor its name is anywhere in `answer`. */
const sealed = (answer: unknown, where: string) => {
  const text = JSON.stringify(answer)
  expect(text, where).not.toContain(SECRET)
  expect(text, where).not.toContain(CREDENTIAL)
}

/** A request that names the credential is refused (422), and writes nothing. */
const refused = async (cell: Cell, method: string, route: string, body?: unknown) => {
  const answer = await cell.rest(method, route, body)
  expect(answer.status, `${method} ${route}`).toBe(422)
}

/** The REST answer of each operation on records that hold the credential. */
const REST: Record<ResourceOperation, ((cell: Cell) => Promise<void>) | string> = {
  index: async (cell) => {
    sealed((await cell.rest('GET', `${path}?per_page=100`)).body, 'list')
    sealed((await cell.rest('GET', '/api/v1/folders?include=documents')).body, 'include')
    await refused(cell, 'GET', `${path}?fields=${CREDENTIAL}`)
    await refused(cell, 'GET', `${path}?filter[${CREDENTIAL}]=${SECRET}`)
    await refused(cell, 'GET', `${path}?sort=${CREDENTIAL}`)
  },
  show: async (cell) => {
    const [id] = await listed(cell)
    sealed((await cell.rest('GET', `${path}/${id}`)).body, 'show')
    await refused(cell, 'GET', `${path}/${id}?fields=${CREDENTIAL}`)
  },
  aggregate: async (cell) => {
    sealed((await cell.rest('GET', `${path}/aggregate?count=*&group_by=title`)).body, 'groups')
    await refused(cell, 'GET', `${path}/aggregate?count=*&group_by=${CREDENTIAL}`)
    await refused(cell, 'GET', `${path}/aggregate?min=${CREDENTIAL}`)
  },
  events: async (cell) => {
    sealed(await streamed(cell), 'the event stream')
    await refused(cell, 'GET', `${path}/events?fields=${CREDENTIAL}`)
    await refused(cell, 'GET', `${path}/events?filter[${CREDENTIAL}]=${SECRET}`)
  },
  store: async (cell) => {
    await refused(cell, 'POST', path, { title: 'Keyed', [CREDENTIAL]: 'set by a client' })
    sealed((await cell.rest('POST', path, { title: 'Plain' })).body, 'store')
  },
  update: async (cell) => {
    const [id] = await listed(cell)
    await refused(cell, 'PATCH', `${path}/${id}`, { [CREDENTIAL]: 'set by a client' })
    sealed((await cell.rest('PATCH', `${path}/${id}`, { title: 'Live 1' })).body, 'update')
  },
  destroy: 'a delete answers a message, no record',
  updateMany: async (cell) => {
    const [id] = await listed(cell)
    await refused(cell, 'PATCH', path, [{ id, [CREDENTIAL]: 'set by a client' }])
    sealed((await cell.rest('PATCH', path, [{ id, title: 'Live 1' }])).body, 'updateMany')
  },
  destroyMany: 'a delete answers a message and a count, no record',
  restore: async (cell) => {
    const made = await cell.rest('POST', path, { title: 'Restored' })
    const id = (made.body.data as { id: unknown }).id
    expect((await cell.rest('DELETE', `${path}/${id}`)).status).toBe(200)
    await cell.keepSecret()
    sealed((await cell.rest('POST', `${path}/${id}/restore`)).body, 'restore')
  },
}

/** The operation as documented, with every component schema it refers to, transitively. */
const documented = (op: ResourceOperation) => async (cell: Cell) => {
  const components = (cell.doc as { components?: { schemas?: Json } }).components?.schemas ?? {}
  for (const id of OPERATION_IDS[op]!) {
    const seen = new Set<string>()
    const parts: unknown[] = [cell.operation(id)]
    for (let i = 0; i < parts.length; i++) {
      for (const [, name] of JSON.stringify(parts[i]).matchAll(/#\/components\/schemas\/(\w+)/g)) {
        if (seen.has(name!)) continue
        seen.add(name!)
        parts.push(components[name!])
      }
    }
    sealed(parts, id)
  }
}

const operationRow = (op: ResourceOperation): Row => {
  const rest = REST[op]
  return {
    // Records made since hold no credential: each check starts with every record holding it.
    rest: typeof rest === 'string' ? na(rest) : async (cell) => rest(await secret(cell)),
    openapi: documented(op),
    client: async (cell) => sealed(cell.client, 'the typed client'),
    mcp: na('the MCP tools have rows of their own'),
    audit: na('REST calls are not in the audit trail, which records MCP tool calls'),
  }
}

/** A tool call that names the credential is a tool error; the one that does not is sealed. */
const toolRefuses = async (cell: Cell, name: string, args: Json) => {
  const answer = await call(cell.mcp, name, { model: 'documents', ...args })
  expect(answer.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
}
const toolSealed = async (cell: Cell, name: string, args: Json) => {
  await cell.keepSecret()
  const answer = await call(cell.mcp, name, { model: 'documents', ...args })
  expect(answer.isError, answer.text).toBe(false)
  sealed(answer.json, name)
}

/** No audit entry of the tool holds the credential's value. */
const trailSealed = (name: string) => async (cell: Cell) => {
  const entries = await cell.audited(name)
  expect(entries.length, name).toBeGreaterThan(0)
  expect(JSON.stringify(entries)).not.toContain(SECRET)
}

const secret = async (cell: Cell) => {
  await cell.keepSecret()
  return cell
}

const liveId = async (cell: Cell) => (await listed(cell))[0]

/**
 * A credential column (`api_token`, caught by the `*_token` rule) never leaves the server: not
 * in a REST answer (list, show, include, aggregate, writes), the OpenAPI schemas, the typed
 * client, an MCP tool's answer or the model's MCP resource, nor the audit trail; naming it in a
 * request or a tool call is refused.
 */
export const CREDENTIALS: Record<string, Row> = {
  ...Object.fromEntries(Object.keys(OPERATION_IDS).map((op) => [op, operationRow(op as never)])),
  crud_list: toolRow(async (cell) => {
    await toolSealed(cell, 'crud_list', { per_page: 100, include: ['folder'] })
    await toolRefuses(cell, 'crud_list', { fields: [CREDENTIAL] })
    await toolRefuses(cell, 'crud_list', { filters: { [CREDENTIAL]: SECRET } })
    await toolRefuses(cell, 'crud_list', { sort: CREDENTIAL })
    const { contents } = await cell.mcp.readResource({ uri: 'kiln://models/documents' })
    sealed(contents, 'the model resource')
  }, trailSealed('crud_list')),
  crud_aggregate: toolRow(async (cell) => {
    await toolSealed(cell, 'crud_aggregate', { count: true, group_by: ['title'] })
    await toolRefuses(cell, 'crud_aggregate', { group_by: [CREDENTIAL] })
    await toolRefuses(cell, 'crud_aggregate', { min: [CREDENTIAL] })
  }, trailSealed('crud_aggregate')),
  crud_create: toolRow(async (cell) => {
    await toolRefuses(cell, 'crud_create', { data: { title: 'Keyed', [CREDENTIAL]: 'x' } })
    await toolSealed(cell, 'crud_create', { data: { title: 'Plain' } })
  }, trailSealed('crud_create')),
  crud_update: toolRow(async (cell) => {
    const id = await liveId(cell)
    await toolRefuses(cell, 'crud_update', { id, data: { [CREDENTIAL]: 'x' } })
    await toolSealed(cell, 'crud_update', { id, data: { title: 'Live 1' } })
  }, trailSealed('crud_update')),
  crud_delete: toolRow(async (cell) => {
    const made = await call(cell.mcp, 'crud_create', {
      model: 'documents',
      data: { title: 'Deleted' },
    })
    await cell.keepSecret()
    await toolSealed(cell, 'crud_delete', { id: (made.json as { id: unknown }).id })
  }, trailSealed('crud_delete')),
}
