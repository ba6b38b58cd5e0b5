import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
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
  const { model, id, data, filters, page, perPage } = schemasFor(options.models)

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
        'Lists records of a model, ordered by primary key, one page at a time. filters are ' +
        `equality matches on fields (null matches NULL). per_page is capped at ${MAX_PER_PAGE}.`,
      inputSchema: {
        model,
        filters,
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
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .optional()
      .describe('Equality filters keyed by column name'),
    page: z.int().min(1).optional().describe('Page number, from 1 (default 1)'),
    // Any integer, not only a safe one: a huge per_page is capped at 100, as the spec says.
    perPage: z
      .number()
      .min(1)
      .refine(Number.isInteger, 'must be an integer')
      .meta({ type: 'integer' })
      .optional()
      .describe(`Records per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})`),
  }
}
