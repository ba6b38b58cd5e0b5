import { z } from 'zod'
import { DEFAULT_QUERY_LIMITS, FILTER_OPERATORS } from '../../api/index.ts'

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()])

/**
 * The `filters` argument of `crud_list` and `crud_aggregate`: the REST grammar's `filter[…]`
 * as JSON, one schema for both tools.
 */
export function filtersSchema() {
  const condition = z.union([
    scalar,
    z.partialRecord(
      z.enum(FILTER_OPERATORS),
      z.union([scalar, z.array(scalar).max(DEFAULT_QUERY_LIMITS.maxInValues)]),
    ),
  ])
  return z
    .record(
      z.string(),
      z.union([
        condition,
        z.array(z.record(z.string(), condition)).max(DEFAULT_QUERY_LIMITS.maxOrBranches),
      ]),
    )
    .optional()
    .describe(
      'Filters keyed by field, combined with AND: a value for equality (null matches ' +
        'NULL), or an object of operators: {"title": {"icontains": "kiln"}, "id": {"in": [1, 2]}, ' +
        '"created_at": {"gte": "2026-01-01"}, "author_id": {"null": false}, "priority": ' +
        `{"between": [1, 5]}}. Operators: ${FILTER_OPERATORS.join(', ')} (contains, starts_with ` +
        'and ends_with are case-sensitive, their i-forms are not; in, not_in and between take ' +
        'arrays). Array and JSON fields take contains (every value is an element) and overlaps ' +
        '(some value is), with arrays: {"tags": {"contains": ["power"]}}; a key of a JSON field ' +
        'is filtered by its path: {"meta.color": "red"} (eq, ne, in, not_in, null; compared as ' +
        'text). "or" takes a list of filter objects, ANDed inside, of which a record must match ' +
        'one: {"or": [{"title": {"contains": "a"}}, {"published": true}]} (at most ' +
        `${DEFAULT_QUERY_LIMITS.maxOrBranches}). At most ${DEFAULT_QUERY_LIMITS.maxFilters} ` +
        'filters. Credential fields cannot be filtered on.',
    )
}
