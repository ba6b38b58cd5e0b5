import { type Clock, systemClock } from '../../core/clock.ts'
import type { Logger } from '../../core/logger.ts'
import { aboutApproval, describeDecision } from '../approvals/outcome.ts'
import type { Approval } from '../approvals/store.ts'
import type { McpModelSource } from '../data/models.ts'
import type { AuditTrail } from './audit-trail.ts'
import { recordHeldCall } from './audited-crud.ts'

/**
 * Records the person's decision on the approval page when it is made (`approved` or `denied`,
 * by whom and when), whether or not the client ever comes back for it.
 */
export function recordDecision(
  trail: AuditTrail,
  models: McpModelSource,
  approval: Approval,
): void {
  if (approval.status === 'pending') return
  const by = approval.decidedBy ?? String(approval.userId)
  const at = approval.decidedAt ?? approval.createdAt
  const caller = {
    userId: approval.userId,
    clientId: approval.clientId,
    tenantId: approval.tenantId,
  }
  recordHeldCall(
    { trail, caller, models },
    approval.tool,
    approval.args,
    at,
    approval.status,
    aboutApproval(describeDecision(approval.status, by, at), approval.id),
  )
}

/** How often, at most, the data tools look for approvals that expired unanswered. */
export const EXPIRY_SWEEP_INTERVAL_MS = 60_000

/**
 * Closes the approvals nobody answered: called on the data tools' own path (each server they
 * are registered on), it runs one sweep at most once a minute, with no timer per approval.
 * An approval still awaiting the person past `ttlMs` gets an `expired` entry.
 */
export function expirySweep(
  trail: AuditTrail,
  ttlMs: number,
  options: { clock?: Clock | undefined; logger?: Logger | undefined } = {},
): () => void {
  const clock = options.clock ?? systemClock
  let next = 0
  return () => {
    const now = clock.now()
    if (now < next) return
    next = now + EXPIRY_SWEEP_INTERVAL_MS
    trail
      .closeExpiredApprovals(new Date(now - ttlMs))
      .catch((error: unknown) =>
        options.logger?.error(
          { error: error instanceof Error ? error.message : String(error) },
          'mcp audit: could not close the expired approvals',
        ),
      )
  }
}
