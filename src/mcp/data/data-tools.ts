import type { McpServer, ScopeChallengeHandler, ServerContext } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { createRecordCounter } from '../../api/index.ts'
import type { GrantableAccess } from '../../oauth/index.ts'
import {
  APPROVAL_ID_ARGUMENT,
  type ApprovalOptions,
  type ApprovalStore,
  createApprovalGate,
  guarded,
  recordReader,
} from '../approvals/index.ts'
import { expirySweep, recordDecision } from '../audit/approval-outcomes.ts'
import { recordHeldCall } from '../audit/audited-crud.ts'
import { runTool } from '../tool-result.ts'
import { answerUnlistedCall } from '../unlisted-calls.ts'
import {
  type AccessPolicy,
  checkCall,
  DATA_TOOL_NAMES,
  describeAccess,
  isGranted,
  type McpCaller,
  notGranted,
  toolsFor,
  type WriteToolName,
} from './access.ts'
import { accessPolicyOf, type CrudOptions, createCrud } from './crud.ts'
import { resolveModel } from './crud-input.ts'
import { isSensitiveField } from './models.ts'
import { registerModelResources } from './resources.ts'
import { DATA_TOOLS, type DataToolDescriptor, type ToolInputParts } from './tools.ts'
import { createModelWatch, type ModelWatch } from './watch.ts'

export { DATA_TOOL_NAMES }

/** Options of `createDataTools`. */
export interface DataToolsOptions extends CrudOptions {
  /**
   * Where calls that need the user's approval (the policy's `approval`) are kept, and the page
   * that approves them (docs/mcp/approvals.md).
   */
  approvals?: ApprovalOptions | undefined
}

/** The data tools of one app, resolved once: register them on any number of servers. */
export interface DataTools {
  readonly policy: AccessPolicy
  /** The calls waiting for the user's approval, for the approval page (`approvalPages`). */
  readonly approvals: ApprovalStore
  /** What the tools let an assistant do, for the consent page (`oauthServer({ describeAccess })`). */
  describeAccess(): GrantableAccess
  /** What resource subscriptions read: which models a caller may watch, which rows it sees. */
  readonly watch: ModelWatch
  /**
   * Registers the tools the policy allows on `server`, acting as `caller`; with a grant, only
   * those the grant allows on some model.
   */
  register(server: McpServer, caller?: McpCaller): void
}

/**
 * Resolves the access policy and builds the tools' schemas once. A policy that names an
 * unknown model or field, a credential field, or a model a tenant could reach without a
 * tenant column, throws here: the app does not start.
 * @example
 * ```ts
 * const tools = createDataTools({
 *   database,
 *   models,
 *   access: { models: { posts: { tools: ['crud_list'] } } },
 * })
 * ```
 */
export function createDataTools(options: Omit<DataToolsOptions, 'caller'>): DataTools {
  const policy = accessPolicyOf(options)
  // One counter for every session's tools (each `register` makes a Crud).
  const counts = options.counts ?? createRecordCounter()
  const schemas = buildSchemas(policy)
  const { gate, sweep } = auditedGate(policy, options)
  const logger = options.logger
  logUnreachable(policy, options, logger)
  const onUnexpected = (error: unknown) =>
    logger?.error(
      { error: error instanceof Error ? error.message : String(error) },
      'mcp: tool failed',
    )
  const challenge = (scope: string): ScopeChallengeHandler => {
    // Step-up: a token without the tool's scope is answered 403 insufficient_scope before the
    // tool runs. Tokens without any scope list (a custom `caller`) are left to `checkCall`.
    return ({ authInfo }) =>
      authInfo && authInfo.token !== '' && !authInfo.scopes.includes(scope)
        ? { scopes: [scope], errorDescription: `This tool needs the ${scope} scope` }
        : undefined
  }
  const read = challenge(policy.scopes.read)
  const write = challenge(policy.scopes.write)
  const described = describeAccess(policy)
  const watch = createModelWatch(policy, { database: options.database, counts })
  return {
    policy,
    approvals: gate.store,
    describeAccess: () => described,
    watch,
    register(server, caller) {
      sweep?.()
      const crud = createCrud({ ...options, access: policy, caller, counts })
      const listed = toolsFor(policy, caller)
      registerModelResources(server, policy, caller, watch.record)
      // The writing tools go through the approval gate first (approvals/gate.ts).
      const audit = options.audit
      const approve = guarded(
        gate,
        server,
        caller,
        audit &&
          ((tool, args, started, outcome, message) =>
            recordHeldCall(
              { trail: audit, caller, models: options.models },
              tool,
              args,
              started,
              outcome,
              message,
            )),
        recordReader(crud, options.models),
      )
      for (const tool of DATA_TOOLS) {
        if (!listed.has(tool.allowedBy)) {
          // Not listed, since the grant allows it on no model; a call still gets the answer.
          if (policy.tools.has(tool.allowedBy)) {
            answerUnlistedCall(server, tool.name, (args) =>
              runTool(async () => refuseUngranted(policy, caller, tool, args)),
            )
          }
          continue
        }
        const run = (args: Record<string, unknown>, ctx?: ServerContext) =>
          runTool(() => tool.run(crud, args as never, { signal: ctx?.mcpReq.signal }), onUnexpected)
        server.registerTool(
          tool.name,
          {
            title: tool.title,
            description: tool.description,
            inputSchema: schemas.of(tool, caller),
            annotations: tool.annotations,
            scopeChallenge: tool.access === 'read' ? read : write,
          },
          tool.access === 'write' ? approve(tool.allowedBy as WriteToolName, run) : run,
        )
      }
    },
  }
}

/**
 * The approval gate, with the audit trail hearing the person's decisions as they are made, and
 * the sweep that closes the approvals nobody answered (run from `register`, once a minute).
 */
function auditedGate(policy: AccessPolicy, options: Omit<DataToolsOptions, 'caller'>) {
  const { audit, models, approvals, logger } = options
  const gate = createApprovalGate(
    policy,
    models,
    approvals,
    audit && ((approval) => recordDecision(audit, models, approval)),
  )
  const sweep = audit && expirySweep(audit, gate.store.ttlMs, { clock: approvals?.clock, logger })
  return { gate, sweep }
}

/**
 * The answer to a call of a tool the caller's grant allows on no model, after the checks that
 * come before the grant (docs/mcp/access-policy.md): the model, the tool, the scope.
 */
function refuseUngranted(
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  tool: DataToolDescriptor,
  args: Record<string, unknown>,
): never {
  const name = typeof args.model === 'string' ? args.model : ''
  const model = resolveModel({ models: policy.visibleModels }, name)
  checkCall(policy, model, { caller, action: tool.allowedBy })
  throw notGranted(tool.allowedBy, model)
}

/**
 * Says at start-up which models an assistant cannot reach (every model the policy does not
 * list, by default) and how to grant one: a silent empty tool list would look like a bug.
 */
function logUnreachable(
  policy: AccessPolicy,
  options: Pick<DataToolsOptions, 'models'>,
  logger: DataToolsOptions['logger'],
): void {
  const hidden = options.models.models.filter((model) => !policy.of(model))
  if (hidden.length === 0) return
  // The example is one a developer may grant as it is: a model with no credential column.
  const plain = hidden.find(
    (model) => !model.columns.some((column) => isSensitiveField([column.name, column.key])),
  )
  const example = (plain ?? hidden[0]!).resource
  logger?.info(
    { models: hidden.map((model) => model.resource) },
    `mcp: the data tools reach no model the access policy does not grant; grant one with ` +
      `access: { models: { ${example}: { tools: ['crud_list'] } } } (see docs/access.md)`,
  )
}

/**
 * Registers the data tools on an MCP server: direct database access to the app's models, as
 * far as the access policy allows, scoped to the caller's tenant when it has one.
 * @example
 * ```ts
 * const server = createMcpServer({ name: config.appName })
 * registerDataTools(server, { database, models, access, caller })
 * ```
 */
export function registerDataTools(server: McpServer, options: DataToolsOptions): void {
  createDataTools(options).register(server, options.caller)
}

/**
 * The tools' input schemas, each converted once per set of models it may name: the `model`
 * argument lists the models the caller's grant reaches with that tool, never the others.
 */
function buildSchemas(policy: AccessPolicy) {
  // On the tools some model puts behind approval: the retry of the link flow names it.
  const approvalId = z
    .string()
    .optional()
    .describe(
      'Only when retrying a call the user approved on the approval page: the approval_id ' +
        'that the first call returned, with exactly the same other arguments',
    )
  const held = (tool: DataToolDescriptor) =>
    tool.access === 'write' &&
    policy.visibleModels.some((m) => policy.of(m)!.approval.has(tool.allowedBy))
  const built = new Map<string, z.ZodObject>()
  return {
    of(tool: DataToolDescriptor, caller: McpCaller | undefined): z.ZodObject {
      const names = modelsFor(policy, tool, caller)
      const key = `${tool.name}\u0000${names.join(',')}`
      let schema = built.get(key)
      if (!schema) {
        const model = z
          .string()
          .min(1)
          .describe(`The model (resource name). One of: ${names.join(', ') || '(none)'}`)
        const parts: ToolInputParts = {
          model,
          approvalId: held(tool) ? { [APPROVAL_ID_ARGUMENT]: approvalId } : {},
        }
        schema = convertedOnce(tool.input(parts))
        // The grants a server issues are few; a bound keeps an odd one from growing the cache.
        if (built.size >= MAX_CACHED_SCHEMAS) built.clear()
        built.set(key, schema)
      }
      return schema
    },
  }
}

const MAX_CACHED_SCHEMAS = 512

/** The models `tool` may act on for `caller`: the policy's, within what its grant allows. */
function modelsFor(
  policy: AccessPolicy,
  tool: DataToolDescriptor,
  caller: McpCaller | undefined,
): string[] {
  return policy.visibleModels
    .filter(
      (model) =>
        policy.of(model)!.tools.has(tool.allowedBy) &&
        isGranted(caller, model.resource, tool.allowedBy),
    )
    .map((model) => model.resource)
}

/**
 * The schema with its JSON Schema converted once. The SDK converts a tool's zod schema per
 * server instance (for `tools/list`, and on every 2026-07-28 `tools/call` to look for
 * `x-mcp-header` parameters), and the HTTP endpoint builds a server per request: converting
 * each time was the largest cost of a call. Validation stays zod's own.
 */
function convertedOnce<T extends z.ZodType>(schema: T): T {
  const target = 'draft-2020-12'
  const input = z.toJSONSchema(schema, { target, io: 'input' })
  const output = z.toJSONSchema(schema, { target, io: 'output' })
  const standard = schema['~standard']
  return {
    '~standard': { ...standard, jsonSchema: { input: () => input, output: () => output } },
  } as unknown as T
}
