import { FieldValueError, ForbiddenError } from '../../core/errors.ts'
import { missingScopeMessage } from '../auth/api-key-auth.ts'
import { missingScopes } from '../provider/scopes.ts'
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, readPageNumber } from '../rest/pagination.ts'
import { type CursorPosition, cursorSecretOf, decodeCursor, fingerprintOf } from './cursor.ts'
import {
  type ListQueryDefinition,
  type QueryCaller,
  type QueryField,
  type ResolvedRelation,
  relationUnderPolicy,
} from './definition.ts'
import { clauseName, type FilterClause, planFilters } from './filters.ts'
import { type QueryInput, QueryProblems, readListQuery } from './grammar.ts'
import { COUNT_STRATEGIES, type CountStrategy } from './limits.ts'
import { parseFieldValue } from './values.ts'

export interface SortKey {
  field: QueryField
  desc: boolean
}

/** A list request, checked against its resource's allow-lists and ready to become SQL. */
export interface ListQueryPlan {
  /** Conditions every record meets (AND). */
  filters: FilterClause[]
  /** The OR group's branches (`filter[or][n][…]`), each an AND of its conditions; [] without one. */
  anyOf: FilterClause[][]
  search: string | undefined
  /** The order, ending with the tie-breaker (the primary key's fields). */
  sort: SortKey[]
  /** The fields records show, in order. */
  output: QueryField[]
  /** `fields=` was given: only `output` is selected. */
  partial: boolean
  includes: ResolvedRelation[]
  mode: 'offset' | 'cursor'
  page: number
  perPage: number
  offset: number
  /** The position a `cursor=` points at (values parsed by field); undefined on a first page. */
  cursor: CursorPosition | undefined
  count: CountStrategy
  /** Digest of sort + filters + search: what a cursor belongs to ('' in offset mode). */
  fingerprint: string
  /** Digest of filters + search: the cache key of their count ('' without any). */
  whereKey: string
}

export interface PlanOptions {
  /** `per_page` when the request has none (15). */
  defaultPerPage?: number
  /** Larger `per_page` values are lowered to this (100). */
  maxPerPage?: number
  /**
   * The caller. `include=` of another resource needs that resource's read scope (`users:read`
   * for `include=author`); without a caller no relation that needs a scope is included.
   */
  caller?: QueryCaller | undefined
}

/**
 * Checks a list request against the resource's allow-lists and caps and returns its plan.
 * Every problem is collected and thrown as one 422 naming each bad parameter.
 */
export function planListQuery(
  definition: ListQueryDefinition,
  input: QueryInput,
  { defaultPerPage = DEFAULT_PER_PAGE, maxPerPage = MAX_PER_PAGE, caller }: PlanOptions = {},
): ListQueryPlan {
  const problems = new QueryProblems()
  const raw = readListQuery(input, problems)
  const { filters, anyOf } = planFilters(definition, raw.filters, problems)
  const sort = planSort(
    definition,
    raw.sort ?? definition.defaultSort,
    problems,
    raw.sort !== undefined,
  )
  const { output, partial } = planFields(definition, raw.fields, problems)
  const includes = planIncludes(definition, raw.include, problems, caller)
  const search = planSearch(definition, raw.search, problems)

  const mode = raw.cursor === undefined ? 'offset' : 'cursor'
  if (mode === 'cursor' && raw.page !== undefined)
    problems.add('page', 'cannot be combined with cursor')
  // Without a key, records equal in every field are indistinguishable: a keyset would skip some.
  if (mode === 'cursor' && !definition.keyed)
    problems.add('cursor', 'needs a primary key; this resource pages by page number only')
  const page = readPositive(raw.page, 1, 'page', problems)
  const perPage = Math.min(
    readPositive(raw.perPage, defaultPerPage, 'per_page', problems),
    maxPerPage,
  )
  // The same rule as the plain page query: a page whose offset passes 2^53 is out of reach.
  const lastReachable = Math.floor(Number.MAX_SAFE_INTEGER / perPage) + 1
  if (page > lastReachable) problems.add('page', `must be at most ${lastReachable}`)
  const offset = (page - 1) * perPage

  let count: CountStrategy = mode === 'cursor' ? 'none' : 'exact'
  if (raw.count !== undefined) {
    if ((COUNT_STRATEGIES as readonly string[]).includes(raw.count))
      count = raw.count as CountStrategy
    else problems.add('count', `must be one of ${COUNT_STRATEGIES.join(', ')}`)
  }
  const describe = (clauses: FilterClause[]) =>
    clauses.map((f) => [clauseName(f), f.op, f.values.map(String)])
  const where: unknown[] = [describe(filters), search ?? null]
  if (anyOf.length > 0) where.push(anyOf.map(describe))
  const whereKey =
    filters.length === 0 && anyOf.length === 0 && search === undefined ? '' : fingerprintOf(where)
  // Only cursors carry it: an offset page does not pay for the digest.
  const fingerprint =
    mode === 'cursor' ? fingerprintOf([where, sort.map((key) => [key.field.name, key.desc])]) : ''
  let cursor: CursorPosition | undefined
  if (raw.cursor && definition.keyed)
    cursor = planCursor(definition, raw.cursor, fingerprint, sort, problems)
  problems.throwIfAny()
  return {
    filters,
    anyOf,
    search,
    sort,
    output,
    partial,
    includes,
    mode,
    page,
    perPage,
    offset,
    cursor,
    count,
    fingerprint,
    whereKey,
  }
}

/** `-created_at,title` → keys, with the tie-breaker (the primary key) appended. */
export function planSort(
  definition: ListQueryDefinition,
  value: string | undefined,
  problems: QueryProblems,
  given = true,
): SortKey[] {
  const keys: SortKey[] = []
  const param = given ? 'sort' : 'defaultSort'
  for (const part of value ? value.split(',') : []) {
    const desc = part.startsWith('-')
    const name = desc ? part.slice(1) : part
    const field = definition.sortable.get(name)
    if (!field) {
      const allowed = [...definition.sortable.keys()].join(', ')
      problems.add(param, `"${part}" is not a sortable field; sortable: ${allowed || '(none)'}`)
    } else if (keys.some((key) => key.field === field)) {
      problems.add(param, `names ${name} twice`)
    } else keys.push({ field, desc })
  }
  if (keys.length > definition.limits.maxSortKeys) {
    problems.add(param, `at most ${definition.limits.maxSortKeys} sort fields`)
  }
  for (const field of definition.tieBreaker) {
    if (!keys.some((key) => key.field === field))
      keys.push({ field, desc: keys.at(-1)?.desc ?? false })
  }
  return keys
}

export function planFields(
  definition: ListQueryDefinition,
  value: string | undefined,
  problems: QueryProblems,
) {
  if (value === undefined) return { output: definition.fields, partial: false }
  const output: QueryField[] = []
  for (const name of value.split(',')) {
    const field = definition.fields.find((candidate) => candidate.name === name)
    if (!field) {
      problems.add(
        'fields',
        `"${name}" is not a field; fields: ${definition.fields.map((f) => f.name).join(', ')}`,
      )
    } else if (!output.includes(field)) output.push(field)
  }
  return { output, partial: true }
}

/**
 * The relations `include=` names, each read under the related model's own policy: a key
 * without the related resource's read scope is refused (403, as a direct request would be),
 * and records show only the fields that resource shows.
 */
function planIncludes(
  definition: ListQueryDefinition,
  value: string | undefined,
  problems: QueryProblems,
  caller: QueryCaller | undefined,
) {
  if (value === undefined || value === '') return []
  const includes: ResolvedRelation[] = []
  const names = value.split(',')
  if (names.length > definition.limits.maxIncludes) {
    problems.add('include', `at most ${definition.limits.maxIncludes} relations`)
  }
  for (const name of names) {
    if (name.split('.').length > definition.limits.maxIncludeDepth) {
      problems.add(
        'include',
        `"${name}" nests deeper than ${definition.limits.maxIncludeDepth} level(s)`,
      )
      continue
    }
    const declared = definition.relations.get(name)
    if (!declared) {
      const allowed = [...definition.relations.keys()].join(', ')
      problems.add('include', `"${name}" is not a relation; relations: ${allowed || '(none)'}`)
      continue
    }
    const relation = relationUnderPolicy(declared)
    if (relation.readScope !== undefined) {
      const missing = missingScopes(caller?.scopes ?? [], [relation.readScope])
      if (missing.length > 0) throw new ForbiddenError(missingScopeMessage(missing))
    }
    if (!includes.includes(relation)) includes.push(relation)
  }
  return includes
}

/** The `search=` term, trimmed (none when blank), or a problem when the resource has no search. */
export function planSearch(
  definition: ListQueryDefinition,
  value: string | undefined,
  problems: QueryProblems,
) {
  if (value === undefined) return undefined
  if (definition.search.length === 0) {
    problems.add('search', 'this resource has no search')
    return undefined
  }
  if (value.length > definition.limits.maxValueLength) {
    problems.add('search', `must be at most ${definition.limits.maxValueLength} characters`)
    return undefined
  }
  const term = value.trim()
  return term === '' ? undefined : term
}

function planCursor(
  definition: ListQueryDefinition,
  value: string,
  fingerprint: string,
  sort: SortKey[],
  problems: QueryProblems,
): CursorPosition | undefined {
  const decoded = decodeCursor(value, fingerprint, cursorSecretOf(definition))
  if (decoded === 'malformed') {
    problems.add('cursor', 'is not a valid cursor')
    return undefined
  }
  if (decoded === 'other-query') {
    problems.add('cursor', 'belongs to another sort, filter or search; start again without it')
    return undefined
  }
  if (decoded.values.length !== sort.length) {
    problems.add('cursor', 'is not a valid cursor')
    return undefined
  }
  try {
    const values = decoded.values.map((json, i) => {
      const { field } = sort[i]!
      if (json === null) {
        if (!field.info.nullable) throw new FieldValueError('null')
        return null
      }
      if (typeof json !== 'string' && typeof json !== 'number' && typeof json !== 'boolean') {
        throw new FieldValueError('type')
      }
      const parsed = parseFieldValue(field.kind, field.info, String(json), {
        dialect: definition.dialect,
      })
      // Postgres keeps microseconds: the cursor holds the database's own text of the value.
      return exactTimestamp(definition, field) ? String(json) : parsed
    })
    return { values, direction: decoded.direction }
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    problems.add('cursor', 'is not a valid cursor')
    return undefined
  }
}

function readPositive(
  raw: string | undefined,
  fallback: number,
  name: string,
  problems: QueryProblems,
) {
  const value = readPageNumber(raw, fallback)
  if (typeof value === 'number') return value
  problems.add(name, value)
  return fallback
}

/** Timestamps whose cursor value is the database's text (microseconds), not a JS Date. */
export function exactTimestamp(definition: ListQueryDefinition, field: QueryField): boolean {
  return definition.dialect === 'postgres' && field.kind === 'timestamp'
}
