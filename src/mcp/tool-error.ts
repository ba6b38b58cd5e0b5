import type { AuditOutcome } from '../db/index.ts'

/**
 * The audit outcome an error stands for, as a property keyed by this symbol: a branded error
 * (`RefusedError`, an approval that is pending) is recorded with that outcome, any other
 * failure as `error`. A `Symbol.for` key, so copies of kiln in one process agree.
 */
export const AUDIT_OUTCOME: unique symbol = Symbol.for('kiln.mcp.auditOutcome') as never

/** A failure the caller can fix; its message is returned as the tool error. */
export class ToolError extends Error {
  readonly [AUDIT_OUTCOME]: AuditOutcome = 'error'
}

/**
 * A call the access rules refuse: a model or tool the policy or the person's grant does not
 * allow, a missing scope or tenant, or the app's `authorize` hook saying no. A tool error like
 * any other for the caller; the audit trail records it as `refused`.
 */
export class RefusedError extends ToolError {
  override readonly [AUDIT_OUTCOME]: AuditOutcome = 'refused'
}

/** The audit outcome of a thrown value: its brand, else `error`. */
export function auditOutcomeOf(error: unknown): AuditOutcome {
  if (error !== null && typeof error === 'object' && AUDIT_OUTCOME in error) {
    const outcome = (error as { [AUDIT_OUTCOME]: unknown })[AUDIT_OUTCOME]
    if (outcome === 'refused' || outcome === 'awaiting_approval' || outcome === 'error') {
      return outcome
    }
  }
  return 'error'
}
