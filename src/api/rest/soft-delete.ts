import { type Column, getTableColumns, isNotNull, isNull, type SQL, type Table } from 'drizzle-orm'
import { ForbiddenError, ValidationError } from '../../core/errors.ts'
import { missingScopeMessage } from '../auth/api-key-auth.ts'
import { missingScopes } from '../provider/scopes.ts'

/** The list parameter that shows soft-deleted records: `with` them, or `only` them. */
export const TRASHED_PARAM = 'filter[trashed]'

/**
 * The column that marks a record soft-deleted: one named `deleted_at` (or keyed `deletedAt`).
 * The one rule: the generator, the REST helpers and the MCP data tools all ask this.
 */
export function softDeleteColumn(table: Table): Column | undefined {
  return Object.values(getTableColumns(table)).find(
    (column) => column.name === 'deleted_at' || column.name === 'deletedAt',
  )
}

/** What a list of a soft-deleting resource needs: its column and who may see trashed records. */
export interface SoftDelete {
  column: Column
  /** Scopes a key needs for `filter[trashed]=with|only` (the generated controllers: write). */
  scopes: readonly string[]
}

/**
 * Soft deletes for a list: `deleted_at` set hides a record; `filter[trashed]=with` shows
 * trashed records too and `filter[trashed]=only` only them, to keys holding `scopes`.
 */
export function softDeletes(column: Column, ...scopes: string[]): SoftDelete {
  if (!column || typeof column.name !== 'string') {
    throw new TypeError('softDeletes: give the deleted_at column (posts.deletedAt)')
  }
  return { column, scopes }
}

/** `deleted_at IS NULL`: the records that are not in the trash. */
export function notTrashed(column: Column): SQL {
  return isNull(column)
}

/**
 * The condition a list request asks for (`filter[trashed]` absent, `with` or `only`), with its
 * key in the count cache. 422 for another value, 403 for a key without the scopes.
 */
export function trashedCondition(
  softDelete: SoftDelete,
  params: URLSearchParams,
  caller: { scopes: readonly string[] } | undefined,
): { where: SQL; key: string } | undefined {
  const asked = params.getAll(TRASHED_PARAM)
  if (asked.length === 0) return { where: isNull(softDelete.column), key: 'untrashed' }
  if (asked.length > 1 || (asked[0] !== 'with' && asked[0] !== 'only')) {
    throw new ValidationError({ [TRASHED_PARAM]: ['must be "with" or "only"'] })
  }
  const missing = missingScopes(caller?.scopes ?? [], softDelete.scopes)
  if (missing.length > 0) throw new ForbiddenError(missingScopeMessage(missing))
  return asked[0] === 'only' ? { where: isNotNull(softDelete.column), key: 'trashed' } : undefined
}
