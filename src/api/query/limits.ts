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
  /**
   * Page queries prepared per table and database, one per query shape (see statement.ts);
   * requests of further shapes are built each time, as unprepared queries.
   */
  maxPreparedShapes: number
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxFilters: 20,
  maxInValues: 100,
  maxSortKeys: 3,
  maxIncludes: 5,
  maxIncludeDepth: 1,
  maxValueLength: 500,
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
] as const

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

/** Operators that compare order (not on booleans). */
export const RANGE_OPERATORS: readonly FilterOperator[] = ['lt', 'lte', 'gt', 'gte', 'between']

export const COUNT_STRATEGIES = ['exact', 'estimated', 'none'] as const
export type CountStrategy = (typeof COUNT_STRATEGIES)[number]
