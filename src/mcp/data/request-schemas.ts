import { validationMessage } from '../../api/internal.ts'
import { ToolError } from '../tool-error.ts'
import type { McpColumn, McpModel } from './models.ts'

/**
 * A REST request schema as the tools read it: a zod schema (a strict object, possibly
 * `.partial()` and piped through a `.transform`), the one the generated
 * `requests/<model>.ts` exports.
 */
export interface RequestSchema {
  safeParse(
    data: unknown,
    params?: { error?: typeof validationMessage },
  ): {
    success: boolean
    error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }
  }
}

/**
 * The app's REST request schemas by model (`{ posts: { create: CreatePostRequest, update:
 * UpdatePostRequest } }`): a model that has them is written under the same rules as through
 * REST, the fields each one takes and the checks it makes on their values.
 */
export type McpRequests = Readonly<
  Record<string, { create?: RequestSchema | undefined; update?: RequestSchema | undefined }>
>

/**
 * The body fields a request schema takes: its object's keys, through `.transform`/`.pipe`
 * (zod's `in`) and `.partial()` (still an object). Undefined when the schema is not an object.
 */
export function requestFields(schema: RequestSchema): string[] | undefined {
  let current: unknown = schema
  for (let depth = 0; depth < 8 && current; depth++) {
    const shape = (current as { shape?: unknown }).shape
    if (shape && typeof shape === 'object') return Object.keys(shape)
    current = (current as { in?: unknown }).in
  }
  return undefined
}

/**
 * The columns a request schema lets the tools write: its fields, among those the credential
 * rule leaves writable (a REST body may take a password the controller hashes: the tools never
 * write one).
 */
export function columnsOfRequest(
  model: McpModel,
  schema: RequestSchema,
  writable: readonly McpColumn[],
  kind: 'create' | 'update',
): McpColumn[] {
  const fields = requestFields(schema)
  if (!fields) {
    throw new TypeError(
      `mcp requests: ${model.resource}.${kind} is not an object schema (expected the generated ${kind} request)`,
    )
  }
  for (const field of fields) {
    if (!model.columns.some((column) => column.name === field)) {
      throw new TypeError(`mcp requests: ${model.resource}.${kind} takes ${field}: no such field`)
    }
  }
  return writable.filter((column) => fields.includes(column.name))
}

/**
 * Checks `data` as the REST route would: a tool error naming each field and what is wrong, in
 * the REST 422's words (`validationMessage`).
 */
export function checkRequest(model: McpModel, schema: RequestSchema, data: unknown): void {
  const result = schema.safeParse(data, { error: validationMessage })
  if (result.success) return
  const problems = (result.error?.issues ?? []).map((issue) => {
    const path = issue.path.map(String).join('.')
    return path ? `${path}: ${issue.message}` : issue.message
  })
  throw new ToolError(`Invalid data for ${model.resource}: ${problems.join('; ')}`)
}
