import type { DeviceDecision, DeviceGrant, PollState } from '../store/device-grants.ts'
import type { AccessGrant } from './grant.ts'

/** Each `slow_down` adds 5 seconds to the interval. @see RFC 8628 §3.5 */
export const SLOW_DOWN_STEP_SECONDS = 5

export type PollOutcome =
  | { kind: 'expired' }
  | { kind: 'wrong_client' }
  | { kind: 'slow_down'; poll: PollState }
  | { kind: 'pending'; poll: PollState }
  | { kind: 'denied'; poll: PollState }
  | {
      kind: 'approved'
      userId: string
      tenantId: string | undefined
      approvedAt: number
      credentialStamp?: string
      scope: string[]
      grant?: AccessGrant
    }

/**
 * The device-grant polling state machine, over plain data:
 * unknown or expired → `expired_token`; another client's `client_id` → refused; sooner than
 * the interval → `slow_down` (interval + 5 s, and the clock restarts, so a poller that then
 * keeps the new interval is served); no decision yet → `authorization_pending`; denied →
 * `access_denied`; approved → a token. @see RFC 8628 §3.4, §3.5
 */
export function decidePoll(input: {
  grant: DeviceGrant | undefined
  decision: DeviceDecision | undefined
  poll: PollState | undefined
  clientId: string
  now: number
  initialInterval: number
}): PollOutcome {
  const { grant, decision, clientId, now } = input
  if (!grant || grant.expiresAt <= now) return { kind: 'expired' }
  if (grant.clientId !== clientId) return { kind: 'wrong_client' }
  const interval = input.poll?.interval ?? input.initialInterval
  if (input.poll && now - input.poll.lastPollAt < interval * 1000) {
    return {
      kind: 'slow_down',
      poll: { lastPollAt: now, interval: interval + SLOW_DOWN_STEP_SECONDS },
    }
  }
  const poll = { lastPollAt: now, interval }
  if (!decision) return { kind: 'pending', poll }
  if (decision.status === 'denied') return { kind: 'denied', poll }
  return {
    kind: 'approved',
    userId: decision.userId,
    tenantId: decision.tenantId,
    approvedAt: decision.approvedAt,
    // A decision recorded before grants were kept carries no scope: the request's.
    scope: decision.scope ?? grant.scope,
    ...(decision.grant !== undefined ? { grant: decision.grant } : {}),
    ...(decision.credentialStamp !== undefined
      ? { credentialStamp: decision.credentialStamp }
      : {}),
  }
}
