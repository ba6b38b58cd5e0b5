import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server'
import { errorResult } from '../tool-result.ts'

/**
 * How a call that needed approval was allowed: by the signed-in person on the approval page
 * (`page`: which user, when), or by the client itself answering a form question (`client`,
 * only where the app opts in with `clientConfirmation`).
 */
export type ApprovalGrant =
  | { by: 'page'; userId: string; at: number }
  | { by: 'client'; at: number }

/** How a held call ended without running: the outcomes the audit trail records for it. */
export type HeldOutcome = 'refused' | 'denied' | 'expired' | 'cancelled'

/**
 * What the gate decided for one call, for the tool to act on (and an audit trail to record):
 * run it (`approval` says how, when approval was needed), or answer `result` without running
 * it: awaiting the person's approval (a URL-mode request, a question or a link), or ended:
 * refused (forged, used, another call's), denied on the page, expired, or cancelled.
 */
export type GateOutcome =
  | { outcome: 'run'; args: Record<string, unknown>; approval?: ApprovalGrant | undefined }
  | { outcome: 'awaiting_approval'; result: CallToolResult | InputRequiredResult }
  | { outcome: HeldOutcome; result: CallToolResult }

/** A call that ends here, with a tool error saying why. */
export function ended(outcome: HeldOutcome, message: string): GateOutcome {
  return { outcome, result: errorResult(message) }
}

/** The audit trail's words for how a call was allowed (the `approved` entry's message). */
export function describeGrant(grant: ApprovalGrant): string {
  const at = new Date(grant.at).toISOString()
  return grant.by === 'page'
    ? `Approved on the approval page by user ${grant.userId} at ${at}`
    : `Confirmed by the client (form elicitation, allowed by the app) at ${at}`
}
