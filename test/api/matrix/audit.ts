import { expect } from 'vitest'
import { call } from '../../mcp/support/client.ts'
import { type Cell, listed, na, OPERATION_IDS, type Row } from './cell.ts'

const restCall = na('REST calls are not in the audit trail, which records MCP tool calls')

/** A REST operation: the audit trail records MCP tool calls only, on every surface. */
const restRow: Row = {
  rest: restCall,
  openapi: restCall,
  client: restCall,
  mcp: na('the MCP tools have rows of their own'),
  audit: restCall,
}

/** A tool's call leaves one entry: the tool, the model, the outcome and the records it touched. */
const entryOf =
  (tool: string, args: (cell: Cell) => Promise<Record<string, unknown>>, ids = true) =>
  async (cell: Cell): Promise<void> => {
    const before = (await cell.audited(tool)).length
    const outcome = await call(cell.mcp, tool, { model: 'documents', ...(await args(cell)) })
    expect(outcome.isError, outcome.text).toBe(false)
    const entries = await cell.audited(tool)
    expect(entries.length).toBe(before + 1)
    expect(entries[0]).toMatchObject({ tool, model: 'documents', outcome: 'ok' })
    if (ids) expect(entries[0]!.recordIds.length).toBeGreaterThan(0)
  }

const toolRow = (audit: Row['audit']): Row => ({
  rest: na('an MCP tool: the REST operations have rows of their own'),
  openapi: na('an MCP tool: the REST operations have rows of their own'),
  client: na('an MCP tool: the REST operations have rows of their own'),
  mcp: na('the audit column reads the entry the call left'),
  audit,
})

const liveId = async (cell: Cell) => (await listed(cell))[0]

/** What is audited: each MCP tool call, with its outcome and the records it read or wrote. */
export const AUDIT: Record<string, Row> = {
  ...Object.fromEntries(Object.keys(OPERATION_IDS).map((op) => [op, restRow])),
  crud_list: toolRow(entryOf('crud_list', async () => ({ per_page: 5 }))),
  crud_aggregate: toolRow(entryOf('crud_aggregate', async () => ({}), false)),
  crud_create: toolRow(entryOf('crud_create', async () => ({ data: { title: 'Audited' } }))),
  crud_update: toolRow(
    entryOf('crud_update', async (cell) => ({ id: await liveId(cell), data: { title: 'Live' } })),
  ),
  crud_delete: toolRow(
    entryOf('crud_delete', async (cell) => {
      const made = await call(cell.mcp, 'crud_create', {
        model: 'documents',
        data: { title: 'To delete' },
      })
      return { id: (made.json as { id: unknown }).id }
    }),
  ),
}
