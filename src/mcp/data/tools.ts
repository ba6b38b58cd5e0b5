import type { ToolAnnotations } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { COUNT_STRATEGIES, DEFAULT_QUERY_LIMITS } from '../../api/index.ts'
import { DATA_TOOL_ANNOTATIONS, READ_ONLY_TOOL_ANNOTATIONS } from '../annotations.ts'
import type { DataToolName } from './access.ts'
import type { Crud } from './crud-contract.ts'
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './crud-input.ts'
import { filtersSchema } from './filter-schema.ts'

/** The argument schemas every tool shares, built per caller (the models it may name). */
export interface ToolInputParts {
  /** The model argument, describing the models the caller's grant reaches with this tool. */
  model: z.ZodString
  /** `approval_id`, on the tools some model holds for approval; `{}` elsewhere. */
  approvalId: Record<string, z.ZodType>
}

/** One data tool, declared once: every surface (registration, scopes, approval page) reads it. */
interface ToolBase {
  name: string
  /**
   * The allow-list entry (and the consent page's action) that lets it run: `crud_aggregate`
   * goes with `crud_list`.
   */
  allowedBy: DataToolName
  title: string
  description: string
  annotations: ToolAnnotations
  input(parts: ToolInputParts): z.ZodObject
  /** Runs one call on the caller's `Crud` (the policy's checks happen inside it). */
  run(crud: Crud, args: never, extra: { signal?: AbortSignal | undefined }): Promise<unknown>
}

/** A tool that reads: it needs the read scope (`mcp:read`) and is never held for approval. */
export interface ReadToolDescriptor extends ToolBase {
  access: 'read'
}

/** A tool that writes: it needs the write scope and may be held for the person's approval. */
export interface WriteToolDescriptor extends ToolBase {
  access: 'write'
  /** What the approval page says the call does: "Delete posts record 5". */
  approval(call: { model: string; id: string }): string
}

export type DataToolDescriptor = ReadToolDescriptor | WriteToolDescriptor

const id = () => z.union([z.int(), z.string().min(1)]).describe('The primary key of the record')
const data = () =>
  z
    .record(z.string(), z.unknown())
    .describe('Field values keyed by column name (snake_case, as crud_list returns them)')
const search = () =>
  z.string().optional().describe('Records whose text fields contain the term (case-insensitive)')

const createTool: WriteToolDescriptor = {
  name: 'crud_create',
  allowedBy: 'crud_create',
  access: 'write',
  title: 'Create a record',
  description:
    'Creates a record of a model and returns it. created_at and updated_at are set by ' +
    'the server. Credential fields (passwords, tokens, secrets) can be neither set nor read.',
  annotations: DATA_TOOL_ANNOTATIONS.crud_create,
  input: ({ model, approvalId }) => z.object({ model, data: data(), ...approvalId }),
  run: (crud, args: Parameters<Crud['create']>[0]) => crud.create(args),
  approval: ({ model }) => `Create a ${model} record`,
}

const listTool: ReadToolDescriptor = {
  name: 'crud_list',
  allowedBy: 'crud_list',
  access: 'read',
  title: 'List records',
  description:
    'Lists records of a model one page at a time, with the grammar of the REST API: ' +
    'filters with operators, sort, fields, include (related records), search, cursor ' +
    'pages and count strategies. Ordered by primary key (every field for a model without ' +
    'one) unless sort says otherwise; ' +
    `per_page is capped at ${MAX_PER_PAGE}. Returns records, total, page and per_page ` +
    '(and next_cursor / prev_cursor when cursor is given).',
  annotations: DATA_TOOL_ANNOTATIONS.crud_list,
  input: ({ model }) => listSchema(model),
  run: (crud, args: Parameters<Crud['list']>[0], { signal }) => crud.list(args, { signal }),
}

const aggregateTool: ReadToolDescriptor = {
  name: 'crud_aggregate',
  allowedBy: 'crud_list',
  access: 'read',
  title: 'Aggregate records',
  description:
    'count, sum, avg, min and max of a model, per group of group_by fields, over the records ' +
    'the filters (the crud_list grammar) select: {"model": "posts", "count": true, "sum": ' +
    '["token_count"], "group_by": ["author_id"]}. Returns {data: [{group, count, sum, avg, ' +
    'min, max}], meta: {groups, truncated}}, groups ordered by their fields. sum and avg take ' +
    'numeric fields, min, max and group_by sortable ones; credential fields never.',
  annotations: READ_ONLY_TOOL_ANNOTATIONS,
  input: ({ model }) => aggregateSchema(model),
  run: (crud, args: Parameters<Crud['aggregate']>[0]) => crud.aggregate(args),
}

const updateTool: WriteToolDescriptor = {
  name: 'crud_update',
  allowedBy: 'crud_update',
  access: 'write',
  title: 'Update a record',
  description: 'Changes the given fields of one record (by primary key) and returns it.',
  annotations: DATA_TOOL_ANNOTATIONS.crud_update,
  input: ({ model, approvalId }) => z.object({ model, id: id(), data: data(), ...approvalId }),
  run: (crud, args: Parameters<Crud['update']>[0]) => crud.update(args),
  approval: ({ model, id }) => `Change ${model} record ${id}`,
}

const deleteTool: WriteToolDescriptor = {
  name: 'crud_delete',
  allowedBy: 'crud_delete',
  access: 'write',
  title: 'Delete a record',
  description: 'Deletes one record by primary key.',
  annotations: DATA_TOOL_ANNOTATIONS.crud_delete,
  input: ({ model, approvalId }) => z.object({ model, id: id(), ...approvalId }),
  run: (crud, args: Parameters<Crud['delete']>[0]) => crud.delete(args),
  approval: ({ model, id }) => `Delete ${model} record ${id}`,
}

/** Every data tool, in the order `tools/list` shows them. Adding one is adding it here. */
export const DATA_TOOLS: readonly DataToolDescriptor[] = Object.freeze([
  createTool,
  listTool,
  aggregateTool,
  updateTool,
  deleteTool,
])

/** The tool named `name`, if kiln has one. */
export function dataTool(name: string): DataToolDescriptor | undefined {
  return DATA_TOOLS.find((tool) => tool.name === name)
}

function listSchema(model: z.ZodString) {
  return z.object({
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
    search: search(),
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
  })
}

/** `crud_aggregate`'s arguments. */
export function aggregateSchema(model: z.ZodString) {
  const fields = (what: string) => z.array(z.string()).optional().describe(what)
  return z.object({
    model,
    filters: filtersSchema(),
    search: search(),
    count: z
      .boolean()
      .optional()
      .describe('Count the records of each group (the default when no function is asked)'),
    sum: fields('Numeric fields to sum'),
    avg: fields('Numeric fields to average'),
    min: fields('Fields whose smallest value to give'),
    max: fields('Fields whose largest value to give'),
    group_by: fields('One group per distinct value of these fields (at most 3)'),
  })
}
