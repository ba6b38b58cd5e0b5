import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { type Clock, systemClock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import { MemoryKeyValueStore } from '../../core/kv/memory-store.ts'
import {
  type AccessPolicy,
  authorizeCall,
  checkCall,
  type McpCaller,
  needsApproval,
  type WriteToolName,
} from '../data/access.ts'
import { resolveModel } from '../data/crud-input.ts'
import type { McpModel, McpModelSource } from '../data/models.ts'
import { ToolError } from '../tool-error.ts'
import { errorResult } from '../tool-result.ts'
import { describeChange } from './change.ts'
import { type ApprovalGrant, ended, type GateOutcome } from './outcome.ts'
import type { ReadRecord } from './preview.ts'
import { APPROVAL_ID_ARGUMENT, APPROVAL_INPUT_KEY, approvalLink, formQuestion } from './requests.ts'
import { type Approval, type ApprovalBinding, ApprovalStore, bindingOf, sameCall } from './store.ts'
import { type Decision, waitForDecision } from './wait.ts'

export { APPROVAL_ID_ARGUMENT, APPROVAL_INPUT_KEY }

/**
 * Options of the approval gate, given as `createDataTools({ approvals })`: where approvals
 * are kept, the page a person decides them on, and where a client may confirm a call itself
 * (docs/mcp/approvals.md).
 */
export interface ApprovalOptions {
  /**
   * Where approvals live: the app's shared store (`shared.kv`, Redis when REDIS_URL is set),
   * so any instance can show, decide and run them. Default: this process's memory.
   */
  store?: KeyValueStore
  /**
   * The page where the signed-in person approves a call (`id => `${APP_URL}/approvals/${id}``,
   * served by `approvalPages`). Without it, no call that needs approval runs, unless the app
   * lets the client confirm it (`clientConfirmation`).
   */
  pageUrl?: (id: string) => string
  /**
   * Where the client's own answer to a form question (form-mode elicitation) is enough: the
   * models (by resource name) and tools listed here. Such a call is approved by whatever
   * answers the client's form, the assistant included, and is recorded as confirmed by the
   * client. Default: nowhere; every approval is the person's, on the approval page.
   */
  clientConfirmation?: { models?: readonly string[]; tools?: readonly WriteToolName[] }
  /** How long an approval stays usable (and a call waits for it). Default 10 minutes. */
  ttlMs?: number
  /** The time approvals are stamped and expire by; tests pass a manual clock. */
  clock?: Clock
  /** How often a waiting call looks for the person's decision. Default 500 ms. */
  pollMs?: number
}

/**
 * The gate the data tools put in front of their writing tools: it decides, call by call,
 * whether the call runs now, waits for the person's approval, or ends without running.
 */
export interface ApprovalGate {
  /** Where the gate keeps approvals and pending questions: what `approvalPages` reads. */
  readonly store: ApprovalStore
  /** Decides whether a call of a writing tool runs now; nothing is written here. */
  check(call: {
    tool: WriteToolName
    args: Record<string, unknown>
    caller: McpCaller | undefined
    server: McpServer
    ctx: ServerContext
    /** Reads the record the call changes, for the page to show (as the caller may read it). */
    read?: ReadRecord | undefined
  }): Promise<GateOutcome>
}

/**
 * The gate in front of the writing tools: a call the policy marks (`approval`, default
 * `crud_delete`) runs only once the signed-in person approved that exact call on the
 * approval page. A client that declares URL-mode elicitation is sent there through the
 * protocol (a 2026-07-28 `input_required`, or a 2025 `elicitation/create` with `mode: "url"`)
 * and its call waits for the decision; any other client gets the page's link, and retries
 * naming the approval's id. A form question the client answers itself is asked only where
 * the app allows it (`clientConfirmation`): what a client declares never makes its own
 * answer count as the person's.
 */
export function createApprovalGate(
  policy: AccessPolicy,
  models: McpModelSource,
  options: ApprovalOptions = {},
  onDecided?: (approval: Approval) => void,
): ApprovalGate {
  const store = new ApprovalStore(options.store ?? new MemoryKeyValueStore(), {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    ...(onDecided ? { onDecided } : {}),
  })
  const clock = options.clock ?? systemClock
  const confirms = (model: McpModel, tool: WriteToolName) =>
    options.clientConfirmation?.models?.includes(model.resource) === true ||
    options.clientConfirmation?.tools?.includes(tool) === true

  return {
    store,
    async check({ tool, args: given, caller, server, ctx, read }) {
      const { [APPROVAL_ID_ARGUMENT]: approvalId, ...args } = given
      const model = findVisible(policy, models, args.model)
      if (!model || !needsApproval(policy, model, tool)) return { outcome: 'run', args }
      // A call that would be refused anyway is refused now, without asking anyone.
      const refusal = await refusalOf(policy, model, tool, caller, args)
      if (refusal !== undefined) return ended('refused', refusal)
      const binding = bindingOf(caller, tool, args)
      const change = describeChange(binding)

      if (typeof approvalId === 'string' && approvalId !== '') {
        return retryWithApproval(store, approvalId, binding, options)
      }
      if (approvalId !== undefined)
        return ended('refused', `${APPROVAL_ID_ARGUMENT} must be a string`)

      const responses = ctx.mcpReq.inputResponses
      const state = ctx.mcpReq.requestState()
      if (responses !== undefined || typeof state === 'string') {
        return answered(store, {
          state: typeof state === 'string' ? state : undefined,
          responses,
          binding,
          clientMayConfirm: confirms(model, tool),
          signal: ctx.mcpReq.signal,
          clock,
          pollMs: options.pollMs,
        })
      }

      const modes = elicitationModes(server, ctx)
      if (modes.form && confirms(model, tool)) {
        const requestState = FORM_STATE + (await store.ask(binding))
        return { outcome: 'awaiting_approval', result: formQuestion(change, requestState) }
      }
      if (!options.pageUrl || caller?.userId === undefined) {
        return ended(
          'refused',
          `${change.summary} needs the user's approval on the approval page, and this server ` +
            'has none. Nothing was changed.',
        )
      }
      const id = args.id
      const record =
        read && (typeof id === 'string' || typeof id === 'number')
          ? await read(model.resource, id)
          : undefined
      const approval = await store.create(binding, record)
      return {
        outcome: 'awaiting_approval',
        result: sendToPage(approval, options.pageUrl, modes.url),
        approvalId: approval.id,
      }
    },
  }
}

/** Why the policy or the app's hook refuses this call, before anyone is asked to approve it. */
async function refusalOf(
  policy: AccessPolicy,
  model: McpModel,
  tool: WriteToolName,
  caller: McpCaller | undefined,
  args: Record<string, unknown>,
): Promise<string | undefined> {
  try {
    checkCall(policy, model, { caller, action: tool })
    // The app's hook sees parsed values when the tool runs; here only a delete (an id and
    // nothing else) is complete enough to ask it, the other writes are checked for the grant.
    const id = args.id as string | number | undefined
    const ask = tool === 'crud_delete' ? policy : { ...policy, authorize: undefined }
    await authorizeCall(ask, model, { caller, action: tool, id })
    return undefined
  } catch (error) {
    if (error instanceof ToolError) return error.message
    throw error
  }
}

/**
 * The person's approval page, for the client to open: a URL-mode request when it declared
 * URL mode (the call's retry then waits for the decision), else the link to pass on.
 */
function sendToPage(
  approval: Approval,
  pageUrl: (id: string) => string,
  urlMode: boolean,
): CallToolResult | InputRequiredResult {
  if (!urlMode) return approvalLink(approval, pageUrl)
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({
        message: `${describeChange(approval).summary}: review and approve it on the approval page.`,
        url: pageUrl(approval.id),
      }),
    },
    requestState: PAGE_STATE + approval.id,
  })
}

/** What a retried request's `requestState` starts with: a form question, or an approval. */
const FORM_STATE = 'form.'
const PAGE_STATE = 'page.'

/** The retry of a request that was asked something: the answer to a form question or a URL. */
async function answered(
  store: ApprovalStore,
  round: {
    state: string | undefined
    responses: unknown
    binding: ApprovalBinding
    clientMayConfirm: boolean
    signal: AbortSignal | undefined
    clock: Clock
    pollMs: number | undefined
  },
): Promise<GateOutcome> {
  const { state, binding } = round
  const change = describeChange(binding)
  const answer = inputResponse(
    round.responses as Parameters<typeof inputResponse>[0],
    APPROVAL_INPUT_KEY,
  )
  if (state?.startsWith(FORM_STATE)) {
    const asked = await store.takeAsked(state.slice(FORM_STATE.length))
    if (!asked) return ended('refused', 'The approval question expired or was already answered')
    if (!sameCall(asked, binding)) {
      return ended('refused', 'The answer is for another call: ask again with the same arguments')
    }
    // The app may have withdrawn its permission since the question was asked.
    if (!round.clientMayConfirm) {
      return ended('refused', `${change.summary} needs the user's approval on the approval page`)
    }
    if (
      answer.kind === 'elicit' &&
      answer.action === 'accept' &&
      answer.content?.approve === true
    ) {
      return {
        outcome: 'run',
        args: binding.args,
        approval: { by: 'client', at: round.clock.now() },
      }
    }
    return ended('denied', `The user declined: ${change.summary}. Nothing was changed.`)
  }
  const id = state?.startsWith(PAGE_STATE) ? state.slice(PAGE_STATE.length) : ''
  const approval = await store.get(id)
  if (!approval || !sameCall(approval, binding)) {
    return ended('refused', 'The approval request expired, was already used, or is not this call’s')
  }
  if (answer.kind !== 'elicit') {
    return ended('refused', 'Answer the approval request: the user decides on the approval page')
  }
  // An answer with content is a form filled in by the client: the approval is the person's.
  if (answer.content !== undefined) {
    return ended(
      'refused',
      `${change.summary} is approved by the user on the approval page, not by the client. ` +
        'Nothing was changed.',
    )
  }
  if (answer.action !== 'accept') {
    await store.take(id)
    return ended(
      'cancelled',
      `The user did not open the approval page: ${change.summary}. Nothing was changed.`,
      id,
    )
  }
  return decided(
    store,
    id,
    await waitForDecision(store, id, round.signal, round.pollMs),
    change.summary,
  )
}

/** The call once the person decided (or the wait ended), the approval used up either way. */
async function decided(
  store: ApprovalStore,
  id: string,
  decision: Decision,
  summary: string,
): Promise<GateOutcome> {
  if (decision.status === 'expired' || decision.status === 'cancelled') {
    const why =
      decision.status === 'expired'
        ? 'The approval expired before the user decided'
        : 'The call was cancelled while waiting for the approval'
    return ended(decision.status, `${why}: ${summary}. Nothing was changed.`, id)
  }
  // Used once, whatever the decision: of concurrent retries exactly one takes it.
  const taken = await store.take(decision.approval.id)
  if (!taken)
    return ended('refused', 'No such approval: it expired, was already used, or is not yours')
  if (taken.status !== 'approved') {
    return ended('denied', `The user declined: ${summary}. Nothing was changed.`, id)
  }
  return { outcome: 'run', args: taken.args, approval: grantOf(taken) }
}

async function retryWithApproval(
  store: ApprovalStore,
  id: string,
  binding: ApprovalBinding,
  options: ApprovalOptions,
): Promise<GateOutcome> {
  const approval = await store.get(id)
  if (
    !approval ||
    approval.userId !== binding.userId ||
    (approval.clientId ?? null) !== (binding.clientId ?? null)
  ) {
    return ended('refused', 'No such approval: it expired, was already used, or is not yours')
  }
  if (!sameCall(approval, binding)) {
    return ended(
      'refused',
      `This approval is for another call (${describeChange(approval).summary}); ` +
        'retry with exactly the arguments it was given for',
    )
  }
  if (approval.status === 'pending') {
    return {
      outcome: 'awaiting_approval',
      result: options.pageUrl
        ? approvalLink(approval, options.pageUrl, 'The user has not approved it yet. ')
        : errorResult('This approval is still waiting for the user'),
      approvalId: approval.id,
    }
  }
  const decision: Decision =
    approval.status === 'approved'
      ? { status: 'approved', approval }
      : { status: 'denied', approval }
  return decided(store, id, decision, describeChange(approval).summary)
}

function grantOf(approval: Approval): ApprovalGrant {
  return {
    by: 'page',
    userId: approval.decidedBy ?? String(approval.userId),
    at: approval.decidedAt ?? approval.createdAt,
  }
}

/**
 * Which elicitation modes the client of this request declared: the request's own envelope
 * (2026-07-28), else what the connection's `initialize` declared (2025). An empty
 * `elicitation` object is form mode (MCP 2025-11-25). A declaration says what the client can
 * show; it never says who answers, so it only chooses between the URL request and the link.
 */
function elicitationModes(server: McpServer, ctx: ServerContext): { form: boolean; url: boolean } {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  const capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ??
    server.server.getClientCapabilities()) as ClientCapabilities | undefined
  const elicitation = capabilities?.elicitation
  if (!elicitation) return { form: false, url: false }
  return {
    form: Object.keys(elicitation).length === 0 || elicitation.form !== undefined,
    url: elicitation.url !== undefined,
  }
}

function findVisible(policy: AccessPolicy, models: McpModelSource, name: unknown) {
  if (typeof name !== 'string') return undefined
  try {
    return resolveModel(models, name, policy.visibleModels)
  } catch {
    return undefined
  }
}
