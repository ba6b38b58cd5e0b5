import { ValidationError } from '../../core/errors.ts'
import { FILTER_OPERATORS, type FilterOperator } from './limits.ts'

/** One `filter[field]=value` or `filter[field][op]=value` parameter, not yet checked. */
export interface RawFilter {
  /** The parameter as written, to name it in errors: `filter[title][contains]`. */
  param: string
  /** The field as written: a column (`title`) or a JSON path in one (`meta.color`). */
  field: string
  op: FilterOperator
  value: string
  /** The branch of the OR group it belongs to (`filter[or][1][…]`); undefined: ANDed with all. */
  branch?: number | undefined
}

/** The list parameters of a query string, split but not yet checked against a resource. */
export interface RawListQuery {
  filters: RawFilter[]
  sort?: string | undefined
  fields?: string | undefined
  include?: string | undefined
  search?: string | undefined
  cursor?: string | undefined
  count?: string | undefined
  page?: string | undefined
  perPage?: string | undefined
}

/** Collects 422 messages per parameter, so one response names every bad parameter. */
export class QueryProblems {
  readonly #errors = new Map<string, string[]>()

  add(param: string, message: string): void {
    const list = this.#errors.get(param) ?? []
    if (!list.includes(message)) list.push(message)
    this.#errors.set(param, list)
  }

  get empty(): boolean {
    return this.#errors.size === 0
  }

  throwIfAny(): void {
    if (this.#errors.size > 0) throw new ValidationError(Object.fromEntries(this.#errors))
  }
}

const FILTER_KEY = /^filter\[([^[\]]+)\](?:\[([^[\]]+)\])?$/
/** `filter[or][<branch>][field]` or `filter[or][<branch>][field][op]`: one condition of a branch. */
const OR_KEY = /^filter\[or\]\[([0-9]{1,3})\]\[([^[\]]+)\](?:\[([^[\]]+)\])?$/
const SINGLE = ['sort', 'fields', 'include', 'search', 'cursor', 'count', 'page', 'per_page']

export type QueryInput = URLSearchParams | Record<string, string | undefined>

/**
 * Splits a list request's query string (`filter[title][contains]=kiln&sort=-created_at`)
 * into its parts. Parameters the grammar does not know are left alone, so an app may add its
 * own; a malformed `filter…` key, an unknown operator or a parameter given twice is a 422.
 */
export function readListQuery(input: QueryInput, problems: QueryProblems): RawListQuery {
  const entries: Array<[string, string]> =
    input instanceof URLSearchParams
      ? [...input.entries()]
      : Object.entries(input).flatMap(([k, v]) =>
          v === undefined ? [] : [[k, v] as [string, string]],
        )
  const seen = new Set<string>()
  const raw: RawListQuery = { filters: [] }
  for (const [key, value] of entries) {
    const isFilter = key.startsWith('filter')
    if (!isFilter && !SINGLE.includes(key)) continue
    if (seen.has(key)) {
      problems.add(key, 'is given more than once')
      continue
    }
    seen.add(key)
    if (value.includes('\0')) {
      problems.add(key, 'must not contain NUL characters')
      continue
    }
    if (!isFilter) {
      raw[key === 'per_page' ? 'perPage' : (key as Exclude<keyof RawListQuery, 'filters'>)] = value
      continue
    }
    const branched = OR_KEY.exec(key)
    const match = branched ? null : FILTER_KEY.exec(key)
    if (!match && !branched) {
      problems.add(
        key,
        'is not a filter: write filter[field]=value, filter[field][operator]=value or ' +
          'filter[or][n][field][operator]=value',
      )
      continue
    }
    const [field, written] = branched ? [branched[2]!, branched[3]] : [match![1]!, match![2]]
    const op = (written ?? 'eq') as FilterOperator
    if (!FILTER_OPERATORS.includes(op)) {
      problems.add(key, `has an unknown operator; use one of ${FILTER_OPERATORS.join(', ')}`)
      continue
    }
    raw.filters.push({
      param: key,
      field,
      op,
      value,
      branch: branched ? Number(branched[1]) : undefined,
    })
  }
  return raw
}

/** `a,b,c` → `['a', 'b', 'c']`; `\,` keeps a comma inside a value. */
export function splitList(value: string): string[] {
  return value.split(/(?<!\\),/).map((part) => part.replaceAll('\\,', ','))
}
