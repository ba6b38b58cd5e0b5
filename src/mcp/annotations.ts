import type { ToolAnnotations } from '@modelcontextprotocol/server'
import type { DataToolName } from './data/access.ts'

/**
 * What each of kiln's tools does to the world, as MCP tool annotations. Every tool states all
 * four hints (a missing one means the protocol's pessimistic default: destructive, open
 * world). They are hints for the client's approval UI, not a control: the access policy,
 * scopes and grant decide what runs. `test/mcp/annotations.test.ts` checks each against what
 * the tool does.
 *
 * - `openWorldHint` is false for every kiln tool: the data tools reach the app's own
 *   database, the developer tools its own files, the OpenAPI bridge the one API it was given.
 * - `crud_update` is idempotent: repeating the same change leaves the same record (kiln bumps
 *   `updated_at` again, which the hint does not count as an effect, as HTTP PUT does not).
 * - `crud_delete` is idempotent: a second delete of the same id changes nothing (it answers
 *   a "not found" tool error).
 */
export const DATA_TOOL_ANNOTATIONS: Readonly<Record<DataToolName, ToolAnnotations>> = {
  crud_list: closed({ readOnly: true, destructive: false, idempotent: true }),
  crud_create: closed({ readOnly: false, destructive: false, idempotent: false }),
  crud_update: closed({ readOnly: false, destructive: true, idempotent: true }),
  crud_delete: closed({ readOnly: false, destructive: true, idempotent: true }),
}

/** The developer tools only read the project's files and environment. */
export const READ_ONLY_TOOL_ANNOTATIONS: ToolAnnotations = closed({
  readOnly: true,
  destructive: false,
  idempotent: true,
})

/**
 * The OpenAPI bridge's tools, by HTTP method and its semantics (RFC 9110): GET reads; POST
 * adds (neither destructive nor idempotent); PUT replaces (destructive, idempotent); PATCH
 * changes fields in place (destructive, not guaranteed idempotent); DELETE removes
 * (destructive, idempotent).
 */
export function httpMethodAnnotations(
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
): ToolAnnotations {
  switch (method) {
    case 'get':
      return READ_ONLY_TOOL_ANNOTATIONS
    case 'post':
      return closed({ readOnly: false, destructive: false, idempotent: false })
    case 'put':
      return closed({ readOnly: false, destructive: true, idempotent: true })
    case 'patch':
      return closed({ readOnly: false, destructive: true, idempotent: false })
    case 'delete':
      return closed({ readOnly: false, destructive: true, idempotent: true })
  }
}

function closed(hints: {
  readOnly: boolean
  destructive: boolean
  idempotent: boolean
}): ToolAnnotations {
  return Object.freeze({
    readOnlyHint: hints.readOnly,
    destructiveHint: hints.destructive,
    idempotentHint: hints.idempotent,
    openWorldHint: false,
  })
}
