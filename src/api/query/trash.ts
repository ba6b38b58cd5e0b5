import type { SQL } from 'drizzle-orm'
import { resourceName } from '../../db/models/inflect.ts'
import {
  type SoftDelete,
  softDeleteColumn,
  softDeletes,
  TRASHED_PARAM,
  trashedCondition,
} from '../rest/soft-delete.ts'
import type { ListQueryDefinition, QueryCaller } from './definition.ts'

/**
 * The soft delete every read of a resource keeps to (its list, its aggregate, and each surface
 * built on them): the one the caller gives (`softDeletes(posts.deletedAt, 'posts:write')`), else
 * the table's own `deleted_at` column, its trashed records shown to keys holding the resource's
 * write scope, as the generated controllers declare. A read that forgets to pass it still hides
 * the trash. Undefined for a table without such a column.
 */
export function softDeleteOf(
  definition: Pick<ListQueryDefinition, 'table' | 'tableName'>,
  given: SoftDelete | undefined,
): SoftDelete | undefined {
  if (given) return given
  const column = softDeleteColumn(definition.table)
  return column && softDeletes(column, `${resourceName(definition.tableName)}:write`)
}

/** What a read of a soft-deleting resource keeps to: its trash condition and its other parameters. */
export interface TrashedRead {
  /** `deleted_at IS NULL` by default; `IS NOT NULL` for `only`; undefined for `with`. */
  trashed: { where: SQL; key: string } | undefined
  /** The request's parameters without `filter[trashed]`, which filters no field. */
  params: URLSearchParams
}

/**
 * Reads `filter[trashed]` off a list or aggregate request under `softDeleteOf`'s rule: 422 for
 * a value other than `with` or `only`, 403 for a caller without the soft delete's scopes.
 */
export function trashedRead(
  definition: Pick<ListQueryDefinition, 'table' | 'tableName'>,
  params: URLSearchParams,
  context: { softDelete?: SoftDelete | undefined; caller?: QueryCaller | undefined },
): TrashedRead {
  const softDelete = softDeleteOf(definition, context.softDelete)
  if (!softDelete) return { trashed: undefined, params }
  const trashed = trashedCondition(softDelete, params, context.caller)
  const rest = new URLSearchParams(params)
  rest.delete(TRASHED_PARAM)
  return { trashed, params: rest }
}
