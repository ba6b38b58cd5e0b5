import type {
  CallToolResult,
  InputRequiredResult,
  McpServer,
  ServerContext,
} from '@modelcontextprotocol/server'
import { systemClock } from '../../core/clock.ts'
import { AWAITING_APPROVAL_MESSAGE } from '../../db/index.ts'
import type { McpCaller, WriteToolName } from '../data/access.ts'
import { APPROVAL_ID_ARGUMENT, type ApprovalGate } from './gate.ts'
import { aboutApproval, describeGrant, type HeldOutcome } from './outcome.ts'
import type { ReadRecord } from './preview.ts'

/**
 * What the audit trail hears from the gate, with the time the call started: the call waits
 * (`awaiting_approval`: a URL request, a question or a link went out), was allowed
 * (`approved` on the page, `client_confirmed` by the client; the tool's own entry follows), or
 * ended without running (refused, denied, expired or cancelled).
 */
export type GateAuditOutcome = 'awaiting_approval' | 'approved' | 'client_confirmed' | HeldOutcome

export type OnHeldCall = (
  tool: WriteToolName,
  args: Record<string, unknown>,
  started: number,
  outcome: GateAuditOutcome,
  message: string,
) => void

/**
 * Wraps a writing tool's handler in the approval gate: the handler runs (with the arguments
 * less `approval_id`) only when the gate says so; otherwise the gate's result is the answer.
 * `onHeld` (the audit trail) hears of every decision the gate took; `read` shows the page the
 * record a call changes.
 */
export function guarded(
  gate: ApprovalGate,
  server: McpServer,
  caller: McpCaller | undefined,
  onHeld?: OnHeldCall,
  read?: ReadRecord,
) {
  return <A extends Record<string, unknown>>(
    tool: WriteToolName,
    run: (args: A) => Promise<CallToolResult>,
  ) =>
    async (args: A, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
      const started = systemClock.now()
      const decided = await gate.check({ tool, args, caller, server, ctx, read })
      const { [APPROVAL_ID_ARGUMENT]: _, ...called } = args
      if (decided.outcome === 'run') {
        const { approval } = decided
        // The person's approval on the page was recorded when given (audit/approval-outcomes.ts).
        if (approval?.by === 'client') {
          onHeld?.(tool, called, started, 'client_confirmed', describeGrant(approval))
        }
        return run(decided.args as A)
      }
      // So was their denial: the call's end adds nothing to it.
      if (decided.outcome === 'denied' && decided.approvalId !== undefined) return decided.result
      onHeld?.(
        tool,
        called,
        started,
        decided.outcome,
        aboutApproval(
          decided.outcome === 'awaiting_approval'
            ? AWAITING_APPROVAL_MESSAGE
            : textOf(decided.result),
          decided.approvalId,
        ),
      )
      return decided.result
    }
}

function textOf(result: CallToolResult | InputRequiredResult): string {
  const first = (result as CallToolResult).content?.[0]
  return first?.type === 'text' ? first.text : ''
}
