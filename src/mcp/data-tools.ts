import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { FILTER_OPERATORS } from '../api/index.ts'
import { type CrudOptions, createCrud, DEFAULT_PER_PAGE, MAX_PER_PAGE } from './crud.ts'
import type { McpModelSource } from './models.ts'
import { runTool } from './tool-result.ts'

export type DataToolsOptions = CrudOptions

export const DATA_TOOL_NAMES = ['crud_create', 'crud_list', 'crud_update', 'crud_delete'] as const

/**
 * Registers `crud_create`, `crud_list`, `crud_update` and `crud_delete` on an MCP server: direct
 * database access to the app's models, scoped to the caller's tenant when it has one.
 */
export function registerDataTools(server: McpServer, options: DataToolsOptions): void {
  const crud = createCrud(options)
  const logger = options.logger
  const onUnexpected = (error: unknown) =>
    logger?.error(
      { error: error instanceof Error ? error.message : String(error) },
      'mcp: tool failed',
    )
  const { model, id, data, filters, page, perPage, sort, fields, include, search, cursor, count } =
    schemasFor(options.models)

  server.registerTool(
    'crud_create',
    {
      title: 'Create a record',
      description:
        'Creates a record of a model and returns it. created_at and updated_at are filled in ' +
        'when omitted. Sensitive fields (passwords, tokens, secrets) may be written but are never returned.',
      inputSchema: { model, data },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    (args) => runTool(() => crud.create(args), onUnexpected),
  )

  server.registerTool(
    'crud_list',
    {
      title: 'List records',
      description:
        'Lists records of a model one page at a time, with the same grammar as the REST API: ' +
        'filters with operators, sort, fields, include (related records), search, cursor ' +
        `pages and count strategies. Ordered by primary key unless sort says otherwise. per_page is capped at ${MAX_PER_PAGE}. ` +
        'Returns records, total, page and per_page (and next_cursor / prev_cursor with cursor).',
      inputSchema: {
        model,
        filters,
        sort,
        fields,
        include,
        search,
        cursor,
        count,
        page,
        per_page: perPage,
      },
      annotations: { readOnlyHint: true },
    },
    (args) => runTool(() => crud.list(args), onUnexpected),
  )

  server.registerTool(
    'crud_update',
    {
      title: 'Update a record',
      description: 'Changes the given fields of one record (by primary key) and returns it.',
      inputSchema: { model, id, data },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    (args) => runTool(() => crud.update(args), onUnexpected),
  )

  server.registerTool(
    'crud_delete',
    {
      title: 'Delete a record',
      description: 'Deletes one record by primary key.',
      inputSchema: { model, id },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    (args) => runTool(() => crud.delete(args), onUnexpected),
  )
}

const schemaCache = new WeakMap<McpModelSource, ReturnType<typeof buildSchemas>>()

/**
 * The tools' zod schemas, built once per model source: the HTTP endpoint creates a server per
 * request, and rebuilding the schemas each time was a measurable part of that cost.
 */
function schemasFor(models: McpModelSource): ReturnType<typeof buildSchemas> {
  let schemas = schemaCache.get(models)
  if (!schemas) {
    schemas = buildSchemas(models)
    schemaCache.set(models, schemas)
  }
  return schemas
}

function buildSchemas(models: McpModelSource) {
  const names = models.models.map((model) => model.resource)
  const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()])
  return {
    model: z
      .string()
      .min(1)
      .describe(`The model (resource name). One of: ${names.join(', ') || '(none)'}`),
    id: z.union([z.int(), z.string().min(1)]).describe('The primary key of the record'),
    data: z
      .record(z.string(), z.unknown())
      .describe('Field values keyed by column name (snake_case, as crud_list returns them)'),
    filters: z
      .record(
        z.string(),
        z.union([
          scalar,
          z.partialRecord(z.enum(FILTER_OPERATORS), z.union([scalar, z.array(scalar).max(100)])),
        ]),
      )
      .optional()
      .describe(
        'Filters keyed by column name, combined with AND: a value for equality (null matches ' +
          'NULL), or an object of operators: {"title": {"icontains": "kiln"}, "id": {"in": [1, 2]}, ' +
          '"created_at": {"gte": "2026-01-01"}, "author_id": {"null": false}, "token_count": ' +
          `{"between": [1, 5]}}. Operators: ${FILTER_OPERATORS.join(', ')} (contains, starts_with ` +
          'and ends_with are case-sensitive; their i-forms are not). Sensitive fields cannot be filtered on.',
      ),
    sort: z
      .string()
      .optional()
      .describe(
        'Comma-separated fields, "-" for descending: "-created_at,title". The primary key breaks ties.',
      ),
    fields: z.array(z.string()).optional().describe('Only these fields in each record'),
    include: z
      .array(z.string())
      .optional()
      .describe(
        'Related records to attach, from the foreign keys: a belongs-to relation is named after its ' +
          'key without _id ("author" for author_id), a has-many one after the other table ("comments"); ' +
          'up to 10 related records each',
      ),
    search: z
      .string()
      .optional()
      .describe('Records whose text fields contain the term (case-insensitive)'),
    cursor: z
      .string()
      .optional()
      .describe(
        'Cursor paging: "" for the first page, then next_cursor or prev_cursor from the last result. Not with page.',
      ),
    count: z
      .enum(['exact', 'estimated', 'none'])
      .optional()
      .describe(
        'How total is computed: exact (default with page), estimated (Postgres planner) or none (default with cursor)',
      ),
    page: z.int().min(1).optional().describe('Page number, from 1 (default 1)'),
    perPage: z
      .int()
      .min(1)
      .optional()
      .describe(`Records per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})`),
  }
}
