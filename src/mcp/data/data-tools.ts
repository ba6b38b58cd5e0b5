import type { McpServer, ScopeChallengeHandler } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { COUNT_STRATEGIES, createRecordCounter, DEFAULT_QUERY_LIMITS } from '../../api/index.ts'
import type { GrantableAccess } from '../../oauth/index.ts'
import { DATA_TOOL_ANNOTATIONS } from '../annotations.ts'
import {
  APPROVAL_ID_ARGUMENT,
  type ApprovalOptions,
  type ApprovalStore,
  createApprovalGate,
  guarded,
  recordReader,
} from '../approvals/index.ts'
import { recordHeldCall } from '../audit/audited-crud.ts'
import { runTool } from '../tool-result.ts'
import {
  type AccessPolicy,
  DATA_TOOL_NAMES,
  type DataToolName,
  describeAccess,
  type McpCaller,
  toolsFor,
} from './access.ts'
import {
  accessPolicyOf,
  type CrudOptions,
  createCrud,
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
} from './crud.ts'
import { aggregateSchema, aggregateTool } from './crud-aggregate.ts'
import { filtersSchema } from './filter-schema.ts'
import { registerModelResources } from './resources.ts'

export { DATA_TOOL_NAMES }

/** Options of `createDataTools`. */
export interface DataToolsOptions extends CrudOptions {
  /**
   * Where calls that need the user's approval (the policy's `approval`) are kept, and the page
   * that approves them (docs/mcp.md, Approvals).
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
  const gate = createApprovalGate(policy, options.models, options.approvals)
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
  return {
    policy,
    approvals: gate.store,
    describeAccess: () => described,
    register(server, caller) {
      const crud = createCrud({ ...options, access: policy, caller, counts })
      const { create, list, update, remove } = schemas
      const listed = toolsFor(policy, caller)
      const allowed = (name: DataToolName) => listed.has(name)
      registerModelResources(server, policy, caller)
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
      if (allowed('crud_create')) {
        server.registerTool(
          'crud_create',
          {
            title: 'Create a record',
            description:
              'Creates a record of a model and returns it. created_at and updated_at are set by ' +
              'the server. Credential fields (passwords, tokens, secrets) can be neither set nor read.',
            inputSchema: create,
            annotations: DATA_TOOL_ANNOTATIONS.crud_create,
            scopeChallenge: write,
          },
          approve('crud_create', (args) => runTool(() => crud.create(args), onUnexpected)),
        )
      }
      if (allowed('crud_list')) {
        server.registerTool(
          'crud_list',
          {
            title: 'List records',
            description:
              'Lists records of a model one page at a time, with the grammar of the REST API: ' +
              'filters with operators, sort, fields, include (related records), search, cursor ' +
              'pages and count strategies. Ordered by primary key (every field for a model without ' +
              'one) unless sort says otherwise; ' +
              `per_page is capped at ${MAX_PER_PAGE}. Returns records, total, page and per_page ` +
              '(and next_cursor / prev_cursor when cursor is given).',
            inputSchema: list,
            annotations: DATA_TOOL_ANNOTATIONS.crud_list,
            scopeChallenge: read,
          },
          (args, ctx) =>
            runTool(() => crud.list(args, { signal: ctx.mcpReq.signal }), onUnexpected),
        )
        // crud_list's sibling: the same read grant, the same grammar.
        server.registerTool(
          'crud_aggregate',
          { ...aggregateTool, inputSchema: schemas.aggregate, scopeChallenge: read },
          (args) => runTool(() => crud.aggregate(args), onUnexpected),
        )
      }
      if (allowed('crud_update')) {
        server.registerTool(
          'crud_update',
          {
            title: 'Update a record',
            description: 'Changes the given fields of one record (by primary key) and returns it.',
            inputSchema: update,
            annotations: DATA_TOOL_ANNOTATIONS.crud_update,
            scopeChallenge: write,
          },
          approve('crud_update', (args) => runTool(() => crud.update(args), onUnexpected)),
        )
      }
      if (allowed('crud_delete')) {
        server.registerTool(
          'crud_delete',
          {
            title: 'Delete a record',
            description: 'Deletes one record by primary key.',
            inputSchema: remove,
            annotations: DATA_TOOL_ANNOTATIONS.crud_delete,
            scopeChallenge: write,
          },
          approve('crud_delete', (args) => runTool(() => crud.delete(args), onUnexpected)),
        )
      }
    },
  }
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
  const example = hidden[0]!.resource
  logger?.info(
    { models: hidden.map((model) => model.resource) },
    `mcp: the data tools reach no model the access policy does not grant; grant one with ` +
      `access: { models: { ${example}: { tools: ['crud_list'] } } } (see docs/access.md)`,
  )
}

/**
 * Registers the data tools on an MCP server: direct database access to the app's models, as
 * far as the access policy allows, scoped to the caller's tenant when it has one.
 */
export function registerDataTools(server: McpServer, options: DataToolsOptions): void {
  createDataTools(options).register(server, options.caller)
}

/**
 * The tools' input schemas, built once. `crud_list`'s schema is the one place its arguments
 * are declared.
 */
function buildSchemas(policy: AccessPolicy) {
  const names = policy.visibleModels.map((model) => model.resource)
  const model = z
    .string()
    .min(1)
    .describe(`The model (resource name). One of: ${names.join(', ') || '(none)'}`)
  const id = z.union([z.int(), z.string().min(1)]).describe('The primary key of the record')
  const data = z
    .record(z.string(), z.unknown())
    .describe('Field values keyed by column name (snake_case, as crud_list returns them)')
  // On the tools some model puts behind approval: the retry of the link flow names it.
  const approval = (tool: DataToolName) =>
    policy.visibleModels.some((m) => policy.of(m)!.approval.has(tool))
      ? { [APPROVAL_ID_ARGUMENT]: approvalId }
      : {}
  const approvalId = z
    .string()
    .optional()
    .describe(
      'Only when retrying a call the user approved on the approval page: the approval_id ' +
        'that the first call returned, with exactly the same other arguments',
    )
  return {
    create: convertedOnce(z.object({ model, data, ...approval('crud_create') })),
    update: convertedOnce(z.object({ model, id, data, ...approval('crud_update') })),
    remove: convertedOnce(z.object({ model, id, ...approval('crud_delete') })),
    aggregate: convertedOnce(aggregateSchema(model)),
    list: convertedOnce(
      z.object({
        model,
        filters: filtersSchema(),
        sort: z
          .string()
          .optional()
          .describe(
            'Comma-separated fields, "-" for descending: "-created_at,title" ' +
              `(at most ${DEFAULT_QUERY_LIMITS.maxSortKeys}). The primary key (all its columns, or every ` +
              'field for a model without one) breaks ties.',
          ),
        fields: z.array(z.string()).optional().describe('Only these fields in each record'),
        include: z
          .array(z.string())
          .optional()
          .describe(
            'Related records to attach, from the foreign keys: a belongs-to relation is named ' +
              'after its key without _id ("author" for author_id), a has-many one after the other ' +
              'table ("comments", up to 10 records each). Only models this server lets you list.',
          ),
        search: z
          .string()
          .optional()
          .describe('Records whose text fields contain the term (case-insensitive)'),
        cursor: z
          .string()
          .optional()
          .describe(
            'Cursor paging: "" for the first page, then next_cursor or prev_cursor of the last ' +
              'result. Not with page; only on models with a primary key.',
          ),
        count: z
          .enum(COUNT_STRATEGIES)
          .optional()
          .describe(
            'How total is computed: exact (default with page), estimated (PostgreSQL planner ' +
              'estimate) or none (default with cursor; total is null)',
          ),
        page: z.int().min(1).optional().describe('Page number, from 1 (default 1)'),
        // Any integer, not only a safe one: a huge per_page is capped at 100, as the spec says.
        per_page: z
          .number()
          .min(1)
          .refine(Number.isInteger, 'must be an integer')
          .meta({ type: 'integer' })
          .optional()
          .describe(`Records per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})`),
      }),
    ),
  }
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
