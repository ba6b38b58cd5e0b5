import { createHash } from 'node:crypto'
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server'
import { approvalMessage } from '../../db/index.ts'
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
  | {
      outcome: 'awaiting_approval'
      result: CallToolResult | InputRequiredResult
      /** The approval on the page the call waits for: the audit entry names it. */
      approvalId?: string | undefined
    }
  | { outcome: HeldOutcome; result: CallToolResult; approvalId?: string | undefined }

/** A call that ends here, with a tool error saying why (and the approval it used up). */
export function ended(outcome: HeldOutcome, message: string, approvalId?: string): GateOutcome {
  return { outcome, result: errorResult(message), ...(approvalId ? { approvalId } : {}) }
}

/**
 * An audit message naming the approval it is about, when there is one: by a digest of its id,
 * since the id is the page's address. Every entry of one approval ends alike, so the expiry
 * sweep (`closeExpiredApprovals`) can tell which approvals got no outcome.
 */
export function aboutApproval(message: string, approvalId: string | undefined): string {
  if (approvalId === undefined) return message
  const ref = createHash('sha256').update(approvalId).digest('hex').slice(0, 16)
  return approvalMessage(message, ref)
}

/** The audit trail's words for the person's decision on the page, recorded when made. */
export function describeDecision(
  status: 'approved' | 'denied',
  userId: string,
  at: number,
): string {
  if (status === 'approved') return describeGrant({ by: 'page', userId, at })
  return `Denied on the approval page by user ${userId} at ${new Date(at).toISOString()}`
}

/** The audit trail's words for how a call was allowed (the `approved` entry's message). */
export function describeGrant(grant: ApprovalGrant): string {
  const at = new Date(grant.at).toISOString()
  return grant.by === 'page'
    ? `Approved on the approval page by user ${grant.userId} at ${at}`
    : `Confirmed by the client (form elicitation, allowed by the app) at ${at}`
}
