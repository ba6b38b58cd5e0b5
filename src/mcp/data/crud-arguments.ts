import type { ListQueryDefinition } from '../../api/index.ts'
import { ToolError } from '../tool-error.ts'
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './crud-input.ts'
import type { McpModel } from './models.ts'

/**
 * The arguments of `crud_list` and `crud_aggregate` as the REST list grammar's query string,
 * which the same list and aggregate queries then read: one grammar, two spellings.
 */

export type FilterScalar = string | number | boolean | null
/** `value` (equality, `null` for IS NULL) or `{ operator: value }`; lists for in / not_in / between. */
export type FilterValue = FilterScalar | Record<string, FilterScalar | FilterScalar[]>
/** Filters by field (`meta.color` for a JSON path); `or` takes a list of them, one must match. */
export type Filters = Record<string, FilterValue | Array<Record<string, FilterValue>>>

/** The arguments of `crud_list`. */
export interface ListInput {
  model: string
  filters?: Filters | undefined
  sort?: string | undefined
  fields?: string[] | undefined
  include?: string[] | undefined
  search?: string | undefined
  /** '' for the first cursor page, then a `next_cursor` / `prev_cursor`. */
  cursor?: string | undefined
  count?: 'exact' | 'estimated' | 'none' | undefined
  page?: number | undefined
  per_page?: number | undefined
}

/**
 * Names every unknown filter field at once, with the valid ones: a field, a path in a JSON
 * field (`meta.color`), or those of the `or` list.
 */
export function checkFilterFields(
  definition: ListQueryDefinition,
  model: McpModel,
  filters: Filters | undefined,
): void {
  const known = (name: string) =>
    definition.filterable.has(name) ||
    (name.includes('.') && definition.filterable.get(name.split('.')[0]!)?.structure === 'json')
  const names = Object.entries(filters ?? {}).flatMap(([name, value]) =>
    name === 'or' && Array.isArray(value) && !definition.filterable.has('or')
      ? value.flatMap((branch) => Object.keys(branch))
      : [name],
  )
  const unknown = [...new Set(names.filter((name) => !known(name)))]
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown filter field(s) for ${model.resource}: ${unknown.map((n) => JSON.stringify(n)).join(', ')}. ` +
        `Valid fields: ${[...definition.filterable.keys()].join(', ')}`,
    )
  }
}

/** The spec's paging rules: integers of at least 1; a per_page beyond 100 is capped, not refused. */
export function checkPaging({ page, per_page }: ListInput): void {
  if (page !== undefined && (!Number.isSafeInteger(page) || page < 1))
    throw new ToolError('page must be an integer of at least 1')
  if (per_page !== undefined && (!Number.isInteger(per_page) || per_page < 1))
    throw new ToolError('per_page must be an integer of at least 1')
}

/** The tools' `filters` as the REST grammar's `filter[…]` parameters (`or` as `filter[or][n][…]`). */
export function filterParams(params: URLSearchParams, filters: Filters | undefined): void {
  const put = (prefix: string, field: string, value: FilterValue) => {
    if (value === null) params.set(`${prefix}[${field}][null]`, 'true')
    else if (typeof value !== 'object') params.set(`${prefix}[${field}]`, String(value))
    else {
      for (const [op, operand] of Object.entries(value)) {
        const text = Array.isArray(operand)
          ? operand.map((item) => String(item).replaceAll(',', '\\,')).join(',')
          : String(operand)
        params.set(`${prefix}[${field}][${op}]`, text)
      }
    }
  }
  for (const [field, value] of Object.entries(filters ?? {})) {
    if (Array.isArray(value)) {
      value.forEach((branch, i) => {
        for (const [name, condition] of Object.entries(branch))
          put(`filter[or][${i}]`, name, condition)
      })
    } else put('filter', field, value)
  }
}

/** The tool's arguments as the REST grammar's query string. */
export function toUrl(input: ListInput): URL {
  const url = new URL('http://localhost/')
  const params = url.searchParams
  filterParams(params, input.filters)
  if (input.sort !== undefined) params.set('sort', input.sort)
  if (input.fields !== undefined) params.set('fields', input.fields.join(','))
  if (input.include !== undefined && input.include.length > 0)
    params.set('include', input.include.join(','))
  if (input.search !== undefined) params.set('search', input.search)
  if (input.cursor !== undefined) params.set('cursor', input.cursor)
  if (input.count !== undefined) params.set('count', input.count)
  if (input.page !== undefined) params.set('page', String(input.page))
  params.set('per_page', String(Math.min(input.per_page ?? DEFAULT_PER_PAGE, MAX_PER_PAGE)))
  return url
}
