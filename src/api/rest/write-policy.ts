import type { Table } from 'drizzle-orm'
import type { z } from 'zod'
import { declareWritePolicy } from '../../db/models/policy.ts'

/** The request schemas of a model's create and update (the generated `requests/<model>.ts`). */
export interface ModelRequests {
  create?: z.ZodType | undefined
  update?: z.ZodType | undefined
}

/**
 * Declares what creating and updating `table` take: its REST request schemas, the fields and
 * the checks on their values. The generated controller calls it beside `defineListQuery`, so the
 * MCP tools write the model under the same schemas without the app handing them over again
 * (a schema that takes a field that is no column, as `password` is, stays REST's alone).
 * @example
 * ```ts
 * declareRequests(posts, { create: CreatePostRequest, update: UpdatePostRequest })
 * ```
 */
export function declareRequests(table: Table, requests: ModelRequests): void {
  declareWritePolicy(table, { create: requests.create, update: requests.update })
}
