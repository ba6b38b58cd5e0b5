import { randomBytes } from 'node:crypto'
import { type Clock, systemClock } from '../../core/clock.ts'
import { keyDigest } from '../../core/kv/key-digest.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { McpCaller, WriteToolName } from '../data/access.ts'

/** How long an approval (or a question asked through the protocol) stays usable: 10 minutes. */
export const APPROVAL_TTL_MS = 10 * 60_000

/** What an approval is bound to: who asks, through which client, for which exact call. */
export interface ApprovalBinding {
  /** The signed-in user the call acts as; absent on a local stdio server. */
  userId: string | undefined
  /** The OAuth client the call came through; absent on a local stdio server. */
  clientId: string | undefined
  /** The caller's tenant, for the audit entry of the decision (not part of the match). */
  tenantId?: string | undefined
  /** The writing tool called (`crud_delete`). */
  tool: WriteToolName
  /** The call's arguments (without `approval_id`), as the tool received them. */
  args: Record<string, unknown>
}

/** Where an approval stands: waiting for the user, or decided on the approval page. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied'

/**
 * A call of a writing tool waiting for (or given) the signed-in user's decision, in the link
 * flow: what `approvalPages` shows and the retry naming `approval_id` uses up. It expires after
 * the approvals' `ttlMs` (10 minutes) whatever its status.
 */
export interface Approval extends ApprovalBinding {
  /** Random and unguessable: the `approval_id` of the retry and the page's `<path>/<id>`. */
  id: string
  status: ApprovalStatus
  /** Milliseconds since the epoch. */
  createdAt: number
  /** Milliseconds since the epoch; past it the approval is gone. */
  expiresAt: number
  /** The signed-in user who decided it on the page, once decided. */
  decidedBy?: string | undefined
  /** When it was decided, in milliseconds since the epoch. */
  decidedAt?: number | undefined
  /** The record the call changes, as the caller could read it when the approval was asked. */
  record?: Record<string, unknown> | undefined
}

/**
 * Approvals and pending protocol questions in the shared store (Redis when REDIS_URL is set),
 * so the instance that shows the page, the one that asked and the one that runs the retry
 * need not be the same. Every entry expires after `ttlMs`; using one removes it.
 */
export class ApprovalStore {
  readonly #kv: KeyValueStore
  readonly #clock: Clock
  readonly ttlMs: number
  readonly #onDecided: ((approval: Approval) => void) | undefined

  /** `onDecided` hears each decision as it is recorded (the audit trail's entry for it). */
  constructor(
    kv: KeyValueStore,
    options: { clock?: Clock; ttlMs?: number; onDecided?: (approval: Approval) => void } = {},
  ) {
    this.#kv = kv
    this.#clock = options.clock ?? systemClock
    this.ttlMs = options.ttlMs ?? APPROVAL_TTL_MS
    this.#onDecided = options.onDecided
  }

  /** A new pending approval, for the page; `record`: what the call changes, as it is now. */
  async create(binding: ApprovalBinding, record?: Record<string, unknown>): Promise<Approval> {
    const now = this.#clock.now()
    const approval: Approval = {
      ...binding,
      ...(record ? { record } : {}),
      args: canonicalArgs(binding.args),
      id: newId(),
      status: 'pending',
      createdAt: now,
      expiresAt: now + this.ttlMs,
    }
    await this.#kv.set(approvalKey(approval.id), JSON.stringify(approval), { ttlMs: this.ttlMs })
    return approval
  }

  /** The approval, unless it expired, was used, or never existed. */
  async get(id: string): Promise<Approval | undefined> {
    if (!isId(id)) return undefined
    return this.#live(await this.#kv.get(approvalKey(id)))
  }

  /**
   * Records the user's decision on a pending approval of theirs; false when it is not theirs,
   * not pending, or gone.
   */
  async decide(id: string, userId: string, decision: 'approved' | 'denied'): Promise<boolean> {
    const approval = await this.get(id)
    if (!approval || approval.userId !== userId || approval.status !== 'pending') return false
    const ttlMs = approval.expiresAt - this.#clock.now()
    if (ttlMs <= 0) return false
    const decided: Approval = {
      ...approval,
      status: decision,
      decidedBy: userId,
      decidedAt: this.#clock.now(),
    }
    await this.#kv.set(approvalKey(id), JSON.stringify(decided), { ttlMs })
    this.#onDecided?.(decided)
    return true
  }

  /** Removes the approval and returns it: of concurrent callers, exactly one gets it. */
  async take(id: string): Promise<Approval | undefined> {
    if (!isId(id)) return undefined
    return this.#live(await this.#kv.take(approvalKey(id)))
  }

  /** Remembers a question asked through the protocol; its id travels as `requestState`. */
  async ask(binding: ApprovalBinding): Promise<string> {
    const id = newId()
    const asked = {
      ...binding,
      args: canonicalArgs(binding.args),
      expiresAt: this.#clock.now() + this.ttlMs,
    }
    await this.#kv.set(askedKey(id), JSON.stringify(asked), { ttlMs: this.ttlMs })
    return id
  }

  /** The question asked with this `requestState`, once: a replayed answer finds nothing. */
  async takeAsked(id: string): Promise<ApprovalBinding | undefined> {
    if (!isId(id)) return undefined
    const raw = await this.#kv.take(askedKey(id))
    if (raw === undefined) return undefined
    const asked = JSON.parse(raw) as ApprovalBinding & { expiresAt: number }
    return asked.expiresAt > this.#clock.now() ? asked : undefined
  }

  #live(raw: string | undefined): Approval | undefined {
    if (raw === undefined) return undefined
    const approval = JSON.parse(raw) as Approval
    return approval.expiresAt > this.#clock.now() ? approval : undefined
  }
}

/** The binding of a call now, to compare with the one an approval was given for. */
export function bindingOf(
  caller: McpCaller | undefined,
  tool: WriteToolName,
  args: Record<string, unknown>,
): ApprovalBinding {
  return {
    userId: caller?.userId,
    clientId: caller?.clientId,
    tenantId: caller?.tenantId,
    tool,
    args,
  }
}

/** True when both are the same user, client, tool and arguments (key order aside). */
export function sameCall(a: ApprovalBinding, b: ApprovalBinding): boolean {
  return (
    (a.userId ?? null) === (b.userId ?? null) &&
    (a.clientId ?? null) === (b.clientId ?? null) &&
    a.tool === b.tool &&
    JSON.stringify(canonicalArgs(a.args)) === JSON.stringify(canonicalArgs(b.args))
  )
}

/** The arguments with object keys sorted at every level, so equal calls serialize equally. */
export function canonicalArgs(args: Record<string, unknown>): Record<string, unknown> {
  return canonical(args) as Record<string, unknown>
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      out[key] = canonical((value as Record<string, unknown>)[key])
    }
    return out
  }
  return value
}

const ID = /^[A-Za-z0-9_-]{43}$/

function newId(): string {
  return randomBytes(32).toString('base64url')
}

function isId(id: string): boolean {
  return ID.test(id)
}

// The ids are what a client shows to be answered: the store's key names carry their digest only.
function approvalKey(id: string): string {
  return `mcp:approval:${keyDigest(id)}`
}

function askedKey(id: string): string {
  return `mcp:approval-asked:${keyDigest(id)}`
}
