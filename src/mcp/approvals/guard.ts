import type {
  CallToolResult,
  InputRequiredResult,
  McpServer,
  ServerContext,
} from '@modelcontextprotocol/server'
import { systemClock } from '../../core/clock.ts'
import type { McpCaller, WriteToolName } from '../data/access.ts'
import { APPROVAL_ID_ARGUMENT, type ApprovalGate } from './gate.ts'

/**
 * Told of each call the gate held back: `awaiting_approval` (a question or a link went to the
 * user) or `refused` (declined, expired, used, or for another call), with the time it started.
 */
export type OnHeldCall = (
  tool: WriteToolName,
  args: Record<string, unknown>,
  started: number,
  outcome: 'awaiting_approval' | 'refused',
  message: string,
) => void

/**
 * Wraps a writing tool's handler in the approval gate: the handler runs (with the arguments
 * less `approval_id`) only when the gate says so; otherwise the gate's result is the answer,
 * and `onHeld` hears of it (the audit trail).
 */
export function guarded(
  gate: ApprovalGate,
  server: McpServer,
  caller: McpCaller | undefined,
  onHeld?: OnHeldCall,
) {
  return <A extends Record<string, unknown>>(
    tool: WriteToolName,
    run: (args: A) => Promise<CallToolResult>,
  ) =>
    async (args: A, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
      const started = systemClock.now()
      const decided = await gate.check({ tool, args, caller, server, ctx })
      if (decided.outcome === 'run') return run(decided.args as A)
      const { [APPROVAL_ID_ARGUMENT]: _, ...called } = args
      onHeld?.(
        tool,
        called,
        started,
        decided.outcome,
        decided.outcome === 'refused' ? textOf(decided.result) : "Waiting for the user's approval",
      )
      return decided.result
    }
}

function textOf(result: CallToolResult): string {
  const first = result.content[0]
  return first?.type === 'text' ? first.text : ''
}
