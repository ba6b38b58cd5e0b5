import { expect } from 'vitest'
import type { ResourceOperation } from '../../../src/api/resource/index.ts'
import { DATA_TOOLS } from '../../../src/mcp/data/tools.ts'
import { type Cell, listed, na, OPERATION_IDS, path, type Row, toolRow } from './cell.ts'

/** A request of each operation that a key with the scope would have served. */
const REQUESTS: Record<ResourceOperation, (live: unknown) => [string, string, unknown?]> = {
  index: () => ['GET', path],
  show: (id) => ['GET', `${path}/${id}`],
  aggregate: () => ['GET', `${path}/aggregate?count=*`],
  events: () => ['GET', `${path}/events`],
  store: () => ['POST', path, { title: 'Refused' }],
  update: (id) => ['PUT', `${path}/${id}`, { title: 'Refused' }],
  destroy: (id) => ['DELETE', `${path}/${id}`],
  updateMany: (id) => ['PATCH', path, [{ id, title: 'Refused' }]],
  destroyMany: (id) => ['DELETE', `${path}?ids=${id}`],
  restore: (id) => ['POST', `${path}/${id}/restore`],
}

/** A key without the operation's scope (with the other one) is refused, and nothing changes. */
const refused = (op: ResourceOperation) => async (cell: Cell) => {
  const needed = cell.definition.scopes[op]
  const other = needed === 'documents:read' ? 'documents:write' : 'documents:read'
  const before = await listed(cell)
  const [method, route, body] = REQUESTS[op](before[0])
  expect((await cell.rest(method, route, body, [other])).status).toBe(403)
  expect(await listed(cell)).toEqual(before)
}

const documented = (op: ResourceOperation) => async (cell: Cell) => {
  for (const id of OPERATION_IDS[op]!) {
    expect(cell.operation(id)['x-scopes'], id).toEqual([cell.definition.scopes[op]])
  }
}

/** The MCP tool's descriptor says whether it reads, and the tool list says so to the client. */
const readOnly = (name: string) => async (cell: Cell) => {
  const descriptor = DATA_TOOLS.find((tool) => tool.name === name)!
  const { tools } = await cell.mcp.listTools()
  const listedTool = tools.find((tool) => tool.name === name)!
  expect(listedTool.annotations?.readOnlyHint ?? false).toBe(descriptor.access === 'read')
}

const operationRow = (op: ResourceOperation): Row => ({
  rest: refused(op),
  openapi: documented(op),
  client: na('the client sends the key it is given; a 403 is in the answer type'),
  mcp: na('the MCP tools have rows of their own'),
  audit: na('REST calls are not in the audit trail, which records MCP tool calls'),
})

const unrecorded = na('a grant without the scope never reaches the tool: nothing to record')

/** The scope each operation needs (`scopes`), and the read or write access of each tool. */
export const SCOPE: Record<string, Row> = {
  ...Object.fromEntries(Object.keys(OPERATION_IDS).map((op) => [op, operationRow(op as never)])),
  ...Object.fromEntries(
    DATA_TOOLS.map((tool) => [
      tool.name,
      toolRow(readOnly(tool.name), tool.access === 'read' ? undefined : unrecorded),
    ]),
  ),
}
