import type { Approval, ApprovalStore } from './store.ts'

/** How often a call waiting on the approval page looks for the person's decision. */
export const DECISION_POLL_MS = 500

/** How a wait for the person's decision ended. */
export type Decision =
  | { status: 'approved'; approval: Approval }
  | { status: 'denied'; approval: Approval }
  | { status: 'expired' }
  | { status: 'cancelled' }

/**
 * Waits until the person decides the approval on the page, it expires (its lifetime is the
 * wait's budget), or the call is cancelled (`signal`: the client's `notifications/cancelled`,
 * or its connection closing). The store is shared, so the page may be served by any instance.
 */
export async function waitForDecision(
  store: ApprovalStore,
  id: string,
  signal: AbortSignal | undefined,
  pollMs = DECISION_POLL_MS,
): Promise<Decision> {
  for (;;) {
    if (signal?.aborted) return { status: 'cancelled' }
    const approval = await store.get(id)
    if (!approval) return { status: 'expired' }
    if (approval.status === 'approved') return { status: 'approved', approval }
    if (approval.status === 'denied') return { status: 'denied', approval }
    await sleep(pollMs, signal)
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
