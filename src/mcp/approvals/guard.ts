import type {
  CallToolResult,
  InputRequiredResult,
  McpServer,
  ServerContext,
} from '@modelcontextprotocol/server'
import type { McpCaller, WriteToolName } from '../access.ts'
import type { ApprovalGate } from './gate.ts'

/**
 * Wraps a writing tool's handler in the approval gate: the handler runs (with the arguments
 * less `approval_id`) only when the gate says so; otherwise the gate's result is the answer.
 */
export function guarded(gate: ApprovalGate, server: McpServer, caller: McpCaller | undefined) {
  return <A extends Record<string, unknown>>(
    tool: WriteToolName,
    run: (args: A) => Promise<CallToolResult>,
  ) =>
    async (args: A, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
      const decided = await gate.check({ tool, args, caller, server, ctx })
      if (decided.outcome !== 'run') return decided.result
      return run(decided.args as A)
    }
}
