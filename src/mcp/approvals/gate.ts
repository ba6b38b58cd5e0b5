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
import type { Clock } from '../../core/clock.ts'
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
import type { McpModelSource } from '../data/models.ts'
import { ToolError } from '../tool-error.ts'
import { errorResult } from '../tool-result.ts'
import { describeChange } from './change.ts'
import { type Approval, ApprovalStore, bindingOf, sameCall } from './store.ts'

/** The argument a retry names its approval with (link flow). */
export const APPROVAL_ID_ARGUMENT = 'approval_id'
/** The key of the approval question in a multi-round-trip `inputRequests` map. */
export const APPROVAL_INPUT_KEY = 'approval'

/**
 * Options of the approval gate, given as `createDataTools({ approvals })`: where approvals
 * are kept and the page a user decides them on (docs/mcp.md, Approvals).
 */
export interface ApprovalOptions {
  /**
   * Where approvals live: the app's shared store (`shared.kv`, Redis when REDIS_URL is set),
   * so any instance can show, decide and run them. Default: this process's memory.
   */
  store?: KeyValueStore
  /**
   * The page where the signed-in user approves a call (`id => `${APP_URL}/approvals/${id}``,
   * served by `approvalPages`). Without it, only a client that can ask the user through the
   * protocol (elicitation) gets a call approved.
   */
  pageUrl?: (id: string) => string
  /** How long an approval stays usable. Default 10 minutes. */
  ttlMs?: number
  /** The time approvals are stamped and expire by; tests pass a manual clock. */
  clock?: Clock
}

/**
 * What the gate decided for one call, for the tool to act on (and an audit trail to record):
 * run it (`approvedBy` says how, when approval was needed), or answer `result` without running
 * it: awaiting the user's approval (a question or a link), or refused (declined, expired, used,
 * not this call's).
 */
export type GateOutcome =
  | {
      outcome: 'run'
      args: Record<string, unknown>
      approvedBy?: 'elicitation' | 'link' | undefined
    }
  | { outcome: 'awaiting_approval'; result: CallToolResult | InputRequiredResult }
  | { outcome: 'refused'; result: CallToolResult }

/**
 * The gate the data tools put in front of their writing tools: it decides, call by call,
 * whether the call runs now, waits for the user's approval, or is refused.
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
  }): Promise<GateOutcome>
}

/**
 * The gate in front of the writing tools: a call the policy marks (`approval`, default
 * `crud_delete`) runs only once the signed-in user approved that exact call, asked through
 * the protocol when the client can (an elicitation, delivered by the SDK as a 2026-07-28
 * `input_required` result or a 2025 `elicitation/create` request), else through a link to
 * the app's approval page, with a retry naming the approval's id.
 */
export function createApprovalGate(
  policy: AccessPolicy,
  models: McpModelSource,
  options: ApprovalOptions = {},
): ApprovalGate {
  const store = new ApprovalStore(options.store ?? new MemoryKeyValueStore(), {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
  })
  const refused = (message: string): GateOutcome => ({
    outcome: 'refused',
    result: errorResult(message),
  })

  return {
    store,
    async check({ tool, args: given, caller, server, ctx }) {
      const { [APPROVAL_ID_ARGUMENT]: approvalId, ...args } = given
      const model = findVisible(policy, models, args.model)
      if (!model || !needsApproval(policy, model, tool)) return { outcome: 'run', args }
      // A call that would be refused anyway is refused now, without asking anyone.
      try {
        checkCall(policy, model, { caller, action: tool })
        // The app's hook sees parsed values when the tool runs; here only a delete (an id and
        // nothing else) is complete enough to ask it, the other writes are checked for the grant.
        const id = args.id as string | number | undefined
        const ask = tool === 'crud_delete' ? policy : { ...policy, authorize: undefined }
        await authorizeCall(ask, model, { caller, action: tool, id })
      } catch (error) {
        if (error instanceof ToolError) return refused(error.message)
        throw error
      }
      const binding = bindingOf(caller, tool, args)
      const change = describeChange(binding)

      if (typeof approvalId === 'string' && approvalId !== '') {
        return retryWithApproval(store, approvalId, binding, options)
      }
      if (approvalId !== undefined) return refused(`${APPROVAL_ID_ARGUMENT} must be a string`)

      const responses = ctx.mcpReq.inputResponses
      const state = ctx.mcpReq.requestState()
      if (responses !== undefined || typeof state === 'string') {
        const asked = typeof state === 'string' ? await store.takeAsked(state) : undefined
        if (!asked) return refused('The approval question expired or was already answered')
        if (!sameCall(asked, binding)) {
          return refused('The answer is for another call: ask again with the same arguments')
        }
        const answer = inputResponse(responses, APPROVAL_INPUT_KEY)
        if (answer.kind === 'elicit' && answer.action === 'accept') {
          if (answer.content?.approve === true) {
            return { outcome: 'run', args, approvedBy: 'elicitation' }
          }
        }
        return refused(`The user declined: ${change.summary}. Nothing was changed.`)
      }

      if (canElicit(server, ctx)) {
        const requestState = await store.ask(binding)
        return {
          outcome: 'awaiting_approval',
          result: inputRequired({
            inputRequests: {
              [APPROVAL_INPUT_KEY]: inputRequired.elicit({
                message:
                  `${change.summary}\n${change.fields.map(([name, value]) => `${name}: ${value}`).join('\n')}`.trim(),
                requestedSchema: {
                  type: 'object',
                  properties: {
                    approve: {
                      type: 'boolean',
                      title: 'Approve',
                      description: `Allow the assistant to ${change.summary.toLowerCase()}`,
                      default: false,
                    },
                  },
                  required: ['approve'],
                },
              }),
            },
            requestState,
          }),
        }
      }

      if (!options.pageUrl || caller?.userId === undefined) {
        return refused(
          `${change.summary} needs the user's approval, and this client cannot ask for it ` +
            '(it does not support elicitation). Nothing was changed.',
        )
      }
      const approval = await store.create(binding)
      return { outcome: 'awaiting_approval', result: approvalLink(approval, options.pageUrl) }
    },
  }
}

async function retryWithApproval(
  store: ApprovalStore,
  id: string,
  binding: ReturnType<typeof bindingOf>,
  options: ApprovalOptions,
): Promise<GateOutcome> {
  const refused = (message: string): GateOutcome => ({
    outcome: 'refused',
    result: errorResult(message),
  })
  const approval = await store.get(id)
  if (
    !approval ||
    approval.userId !== binding.userId ||
    (approval.clientId ?? null) !== (binding.clientId ?? null)
  ) {
    return refused('No such approval: it expired, was already used, or is not yours')
  }
  if (!sameCall(approval, binding)) {
    return refused(
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
    }
  }
  // Used once, whatever the decision: of concurrent retries exactly one takes it.
  const taken = await store.take(id)
  if (!taken) return refused('No such approval: it expired, was already used, or is not yours')
  if (taken.status !== 'approved') {
    return refused(`The user declined: ${describeChange(taken).summary}. Nothing was changed.`)
  }
  return { outcome: 'run', args: binding.args, approvedBy: 'link' }
}

/** The tool result of the link flow: not an error, and nothing done yet. */
function approvalLink(
  approval: Approval,
  pageUrl: (id: string) => string,
  prefix = '',
): CallToolResult {
  const url = pageUrl(approval.id)
  const summary = describeChange(approval).summary
  const expiresAt = new Date(approval.expiresAt).toISOString()
  const text =
    `${prefix}Not done yet: ${summary} needs the user's approval. Ask the user to open ${url} ` +
    `(signed in), review and approve it; then call ${approval.tool} again with the same ` +
    `arguments and "${APPROVAL_ID_ARGUMENT}": "${approval.id}". The approval expires at ${expiresAt}.`
  return {
    content: [{ type: 'text', text }],
    structuredContent: {
      status: 'approval_required',
      approval_id: approval.id,
      approval_url: url,
      expires_at: expiresAt,
    },
  }
}

/** Whether the client of this request said it can show the user a form (elicitation). */
function canElicit(server: McpServer, ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  const capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ??
    server.server.getClientCapabilities()) as ClientCapabilities | undefined
  const elicitation = capabilities?.elicitation
  if (!elicitation) return false
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined
}

function findVisible(policy: AccessPolicy, models: McpModelSource, name: unknown) {
  if (typeof name !== 'string') return undefined
  try {
    return resolveModel(models, name, policy.visibleModels)
  } catch {
    return undefined
  }
}
