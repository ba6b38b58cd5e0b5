import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { expect } from 'vitest'
import type { ResourceOperation } from '../../../src/api/resource/index.ts'
import { DEFAULT_APPROVAL, type WriteToolName } from '../../../src/mcp/data/access.ts'
import { DATA_TOOLS, type DataToolDescriptor } from '../../../src/mcp/data/tools.ts'
import { call } from '../../mcp/support/client.ts'
import { type Cell, type Json, listed, na, OPERATION_IDS, path, type Row, toolRow } from './cell.ts'

const byScope = na('REST is keyed by scope (the scope rows): a key holding it acts at once')

/** A key holding the operation's scope deletes at once: no person is asked on REST. */
const deletesAtOnce = async (cell: Cell) => {
  const made = await cell.rest('POST', path, { title: 'Deleted by key' })
  const id = (made.body.data as { id: unknown }).id
  const scope = cell.definition.scopes.destroy
  expect((await cell.rest('DELETE', `${path}/${id}`, undefined, [scope])).status).toBe(200)
  expect(await listed(cell)).not.toContain(id)
}

const operationRow = (op: ResourceOperation): Row => ({
  rest: op === 'destroy' ? deletesAtOnce : byScope,
  openapi: byScope,
  client: byScope,
  mcp: na('the MCP tools have rows of their own'),
  audit: na('REST calls are not in the audit trail, which records MCP tool calls'),
})

/** The arguments of a call of each write tool on a fresh document (and that document's id). */
const ARGS: Record<WriteToolName, (cell: Cell) => Promise<Json>> = {
  crud_create: async () => ({ data: { title: 'Held create' } }),
  crud_update: async (cell) => ({ id: await fresh(cell), data: { title: 'Held update' } }),
  crud_delete: async (cell) => ({ id: await fresh(cell) }),
}

async function fresh(cell: Cell): Promise<unknown> {
  const made = await cell.rest('POST', path, { title: 'For a held call' })
  return (made.body.data as { id: unknown }).id
}

const held = (tool: DataToolDescriptor) => DEFAULT_APPROVAL.includes(tool.name as WriteToolName)

/**
 * A tool the default policy holds waits for the person: the call changes nothing, answers the
 * approval page's link and the change in the descriptor's words; once approved, the same call
 * with `approval_id` runs. Any other tool runs at once.
 */
const waitsOrRuns = (tool: DataToolDescriptor) => async (cell: Cell) => {
  const args: Json = {
    model: 'documents',
    ...(await (ARGS[tool.name as WriteToolName]?.(cell) ?? {})),
  }
  const before = await listed(cell)
  const answer = await callHeld(cell, tool.name, args)
  expect(answer.isError, answer.text).toBe(false)
  if (tool.access === 'read' || !held(tool)) {
    expect(answer.waiting?.status).not.toBe('approval_required')
    return
  }
  const waiting = answer.waiting!
  expect(waiting.status).toBe('approval_required')
  // The approval page's words for the call: the descriptor's (`approval`), as the page shows them.
  const id = args.id === undefined ? '' : JSON.stringify(args.id)
  expect(answer.text).toContain(tool.approval({ model: 'documents', id }))
  expect(await listed(cell)).toEqual(before)
  expect(await cell.heldTools.approvals.decide(waiting.approval_id, '1', 'approved')).toBe(true)
  const retried = await call(cell.held, tool.name, { ...args, approval_id: waiting.approval_id })
  expect(retried.isError, retried.text).toBe(false)
  expect(await listed(cell)).not.toEqual(before)
}

/** A call on the held tools, with what a held call answers (`approval_required`, its id). */
async function callHeld(cell: Cell, name: string, args: Json) {
  const result = (await cell.held.callTool({ name, arguments: args })) as CallToolResult
  const first = result.content[0]
  return {
    isError: result.isError === true,
    text: first?.type === 'text' ? first.text : '',
    waiting: result.structuredContent as { status: string; approval_id: string } | undefined,
  }
}

/** A held call is in the audit trail as waiting for approval. */
const recordedAsWaiting = (tool: DataToolDescriptor) => async (cell: Cell) => {
  const args = { model: 'documents', ...(await ARGS[tool.name as WriteToolName](cell)) }
  await call(cell.held, tool.name, args)
  const [entry] = await cell.audited(tool.name)
  expect(entry).toMatchObject({ tool: tool.name, model: 'documents', outcome: 'awaiting_approval' })
}

const toolApprovalRow = (tool: DataToolDescriptor): Row => {
  if (tool.access === 'read') {
    return toolRow(waitsOrRuns(tool), na('a read is never held, so never recorded as held'))
  }
  return toolRow(
    waitsOrRuns(tool),
    held(tool) ? recordedAsWaiting(tool) : na('not held: the audit rows record its call'),
  )
}

/**
 * What needs a person's approval: on MCP, the write tools of the default policy
 * (`DEFAULT_APPROVAL`, a delete) wait for the signed-in user; REST is keyed by scope.
 */
export const APPROVAL: Record<string, Row> = {
  ...Object.fromEntries(Object.keys(OPERATION_IDS).map((op) => [op, operationRow(op as never)])),
  ...Object.fromEntries(DATA_TOOLS.map((tool) => [tool.name, toolApprovalRow(tool)])),
}
