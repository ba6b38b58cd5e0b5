/**
 * Caps on what one list request may ask for. They bound the SQL a caller can make kiln run:
 * every clause is a bound parameter over an allow-listed column, and these keep the number of
 * clauses, list values, sort keys and relation queries small.
 */
export interface QueryLimits {
  /** `filter[...]` parameters per request (each is one SQL condition). */
  maxFilters: number
  /** Values in one `in` / `not_in` list. */
  maxInValues: number
  /** Fields in `sort=` (the primary-key tie-breaker is not counted). */
  maxSortKeys: number
  /** Relations in `include=`. */
  maxIncludes: number
  /** Relation nesting: 1 means `include=author`, never `include=author.posts`. */
  maxIncludeDepth: number
  /** Characters of one filter value or of `search=`. */
  maxValueLength: number
  /** Branches of the OR group (`filter[or][0…]`); their conditions count in `maxFilters`. */
  maxOrBranches: number
  /** Keys of a JSON path filter: 2 allows `filter[meta.color.name]`. */
  maxJsonPathDepth: number
  /** Fields in an aggregate's `group_by=`. */
  maxGroupBy: number
  /** Groups an aggregate answers; past it the answer says `meta.truncated: true`. */
  maxGroups: number
  /**
   * Page queries prepared per table and database, one per query shape (see statement.ts);
   * requests of further shapes are built each time, as unprepared queries.
   */
  maxPreparedShapes: number
}

/**
 * The caps every list and aggregate has unless its definition lowers or raises one
 * (`defineListQuery(table, { limits: { maxFilters: 5 } })`); docs/rest-api/lists.md ("Caps") lists them.
 */
export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxFilters: 20,
  maxInValues: 100,
  maxSortKeys: 3,
  maxIncludes: 5,
  maxIncludeDepth: 1,
  maxValueLength: 500,
  maxOrBranches: 10,
  maxJsonPathDepth: 4,
  maxGroupBy: 3,
  maxGroups: 1000,
  maxPreparedShapes: 64,
}

/** Filter operators, as they are written in `filter[field][op]=value`. */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'not_in',
  'between',
  'null',
  'contains',
  'icontains',
  'starts_with',
  'istarts_with',
  'ends_with',
  'iends_with',
  'overlaps',
] as const

/** A filter operator: the `op` of `filter[field][op]=value` (`eq` when `[op]` is left out). */
export type FilterOperator = (typeof FILTER_OPERATORS)[number]

/** Operators that only make sense on text. */
export const TEXT_OPERATORS: readonly FilterOperator[] = [
  'contains',
  'icontains',
  'starts_with',
  'istarts_with',
  'ends_with',
  'iends_with',
]

/** Operators of array fields (and JSON columns holding arrays): all of the values, any of them. */
export const ARRAY_OPERATORS: readonly FilterOperator[] = ['contains', 'overlaps']

/** Operators of a JSON path (`filter[meta.color]`), whose values compare as text. */
export const JSON_PATH_OPERATORS: readonly FilterOperator[] = ['eq', 'ne', 'in', 'not_in', 'null']

/** Operators that compare order (not on booleans). */
export const RANGE_OPERATORS: readonly FilterOperator[] = ['lt', 'lte', 'gt', 'gte', 'between']

/**
 * What `count=` may ask of a list's `meta.total`: `exact` (a cached `count(*)`, the default
 * with `page`), `estimated` (the planner's estimate on Postgres, exact below
 * `estimateThreshold`) or `none` (`null`, the default with `cursor`).
 */
export const COUNT_STRATEGIES = ['exact', 'estimated', 'none'] as const
/** One of `COUNT_STRATEGIES`; `meta.count` names the one the total was counted by. */
export type CountStrategy = (typeof COUNT_STRATEGIES)[number]
