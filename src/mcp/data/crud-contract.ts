import type { AggregateInput, AggregateResult } from './crud-aggregate.ts'
import type { JsonRecord } from './crud-input.ts'
import type { ListInput, ListResult } from './crud-list.ts'

/**
 * The data tools as plain functions, under the same policy, from `createCrud`. Its own module so
 * that the audit trail's wrapper (`mcp/audit/audited-crud.ts`) names it without importing the
 * `createCrud` that applies that wrapper.
 */
export interface Crud {
  create(input: { model: string; data: Record<string, unknown> }): Promise<JsonRecord>
  /** `signal`: the call's; when the client cancels it, the running query is cancelled. */
  list(input: ListInput, options?: { signal?: AbortSignal }): Promise<ListResult>
  /** `crud_aggregate`: under crud_list's grant. */
  aggregate(input: AggregateInput): Promise<AggregateResult>
  update(input: {
    model: string
    id: string | number
    data: Record<string, unknown>
  }): Promise<JsonRecord>
  delete(input: { model: string; id: string | number }): Promise<{ message: string; id: unknown }>
}
