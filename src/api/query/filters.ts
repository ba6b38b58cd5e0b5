import { FieldValueError } from '../../core/errors.ts'
import type { ListQueryDefinition, QueryField } from './definition.ts'
import { type QueryProblems, type RawFilter, splitList } from './grammar.ts'
import {
  ARRAY_OPERATORS,
  type FilterOperator,
  JSON_PATH_OPERATORS,
  RANGE_OPERATORS,
  TEXT_OPERATORS,
} from './limits.ts'
import { fieldKindOf, parseFieldValue } from './values.ts'

/**
 * `filter[…]` planned: each parameter checked against the definition's filterable fields, its
 * operator against the field's kind, its values parsed; the list and the aggregate share it.
 */

export interface FilterClause {
  field: QueryField
  op: FilterOperator
  /**
   * Parsed values: one for most operators, two for `between`, a list for `in`/`not_in` and
   * `contains`/`overlaps` of arrays, a boolean for `null`.
   */
  values: unknown[]
  /** The keys of a JSON path in `field` (`filter[meta.color]` → `['color']`); its values are text. */
  path?: string[] | undefined
}

/** The name a clause filters: the field, or the field and its JSON path (`meta.color`). */
export function clauseName(clause: FilterClause): string {
  return clause.path ? [clause.field.name, ...clause.path].join('.') : clause.field.name
}

/**
 * The filters ANDed together, and the OR group's branches (`filter[or][n][…]`), each an AND of
 * its own conditions. Every condition, in a branch or not, counts in `maxFilters`.
 */
export function planFilters(
  definition: ListQueryDefinition,
  raw: RawFilter[],
  problems: QueryProblems,
): { filters: FilterClause[]; anyOf: FilterClause[][] } {
  const { limits } = definition
  if (raw.length > limits.maxFilters) {
    problems.add('filter', `at most ${limits.maxFilters} filters per request`)
  }
  const filters = raw
    .filter((filter) => filter.branch === undefined)
    .flatMap((filter) => planFilter(definition, filter, problems))
  const branches = [...new Set(raw.flatMap((filter) => filter.branch ?? []))].sort((a, b) => a - b)
  if (branches.length > limits.maxOrBranches) {
    problems.add('filter[or]', `at most ${limits.maxOrBranches} branches`)
  }
  const anyOf = branches.map((branch) =>
    raw
      .filter((filter) => filter.branch === branch)
      .flatMap((filter) => planFilter(definition, filter, problems)),
  )
  return { filters, anyOf }
}

const JSON_KEY = /^[A-Za-z0-9_-]{1,64}$/

function planFilter(
  definition: ListQueryDefinition,
  { param, field: name, op, value }: RawFilter,
  problems: QueryProblems,
): FilterClause[] {
  let field = definition.filterable.get(name)
  let path: string[] | undefined
  if (!field && name.includes('.')) {
    // `meta.color`: a path in a JSON field.
    const [head, ...keys] = name.split('.')
    const json = definition.filterable.get(head!)
    if (json?.structure === 'json') {
      field = json
      path = keys
    }
  }
  if (!field) {
    const allowed = [...definition.filterable.keys()].join(', ')
    problems.add(param, `is not a filterable field; filterable: ${allowed || '(none)'}`)
    return []
  }
  if (value.length > definition.limits.maxValueLength) {
    problems.add(param, `must be at most ${definition.limits.maxValueLength} characters`)
    return []
  }
  if (path) return planJsonPath(definition, field, path, param, op, value, problems)
  if (field.structure) return planStructure(definition, field, param, op, value, problems)
  if (op === 'overlaps') {
    problems.add(param, 'overlaps only applies to array and JSON fields')
    return []
  }
  if (TEXT_OPERATORS.includes(op) && field.kind !== 'text') {
    problems.add(param, `${op} only applies to text, array and JSON fields`)
    return []
  }
  if (RANGE_OPERATORS.includes(op) && (field.kind === 'boolean' || field.kind === 'enum')) {
    problems.add(param, `${op} does not apply to ${field.kind} fields`)
    return []
  }
  if (op === 'null') return planNull(field, param, value, problems)
  let parts = [value]
  if (op === 'in' || op === 'not_in') parts = splitList(value)
  if (op === 'between') {
    parts = splitList(value)
    if (parts.length !== 2) {
      problems.add(param, 'must be two values separated by a comma')
      return []
    }
  }
  if (parts.length > definition.limits.maxInValues) {
    problems.add(param, `must list at most ${definition.limits.maxInValues} values`)
    return []
  }
  try {
    const values = TEXT_OPERATORS.includes(op)
      ? parts
      : parts.map((part) =>
          parseFieldValue(field.kind, field.info, part, { dialect: definition.dialect }),
        )
    return [{ field, op, values }]
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    problems.add(param, error.message)
    return []
  }
}

function planNull(
  field: QueryField,
  param: string,
  value: string,
  problems: QueryProblems,
  path?: string[],
): FilterClause[] {
  if (value !== 'true' && value !== 'false') {
    problems.add(param, 'must be true or false')
    return []
  }
  return [{ field, op: 'null', values: [value === 'true'], path }]
}

/**
 * `filter[tags][contains]=a,b` (every value is an element) and `filter[tags][overlaps]=a,b`
 * (any is) on an array field, or a JSON field holding an array; `null` on either. An array's
 * values are read by its element type; a JSON array's elements compare as text.
 */
function planStructure(
  definition: ListQueryDefinition,
  field: QueryField,
  param: string,
  op: FilterOperator,
  value: string,
  problems: QueryProblems,
): FilterClause[] {
  if (op === 'null') return planNull(field, param, value, problems)
  if (!ARRAY_OPERATORS.includes(op)) {
    problems.add(
      param,
      field.structure === 'array'
        ? `${op} does not apply to array fields; use contains (every value) or overlaps (any value)`
        : `${op} does not apply to a JSON field; filter one of its keys (filter[${field.name}.key]=value), ` +
            'or use contains or overlaps when it holds an array',
    )
    return []
  }
  const parts = splitList(value)
  if (parts.length > definition.limits.maxInValues) {
    problems.add(param, `must list at most ${definition.limits.maxInValues} values`)
    return []
  }
  const element = field.info.element
  if (field.structure === 'json' || !element) return [{ field, op, values: parts }]
  try {
    const kind = fieldKindOf(element)
    return [
      {
        field,
        op,
        values: parts.map((part) =>
          parseFieldValue(kind, element, part, { dialect: definition.dialect }),
        ),
      },
    ]
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    problems.add(param, `each value ${error.message}`)
    return []
  }
}

/** `filter[meta.color]=red`: a JSON field's value at a path, compared as text. */
function planJsonPath(
  definition: ListQueryDefinition,
  field: QueryField,
  path: string[],
  param: string,
  op: FilterOperator,
  value: string,
  problems: QueryProblems,
): FilterClause[] {
  if (path.length > definition.limits.maxJsonPathDepth) {
    problems.add(param, `a JSON path has at most ${definition.limits.maxJsonPathDepth} keys`)
    return []
  }
  if (!path.every((key) => JSON_KEY.test(key))) {
    problems.add(param, 'JSON path keys are letters, digits, _ and - (at most 64 each)')
    return []
  }
  if (!JSON_PATH_OPERATORS.includes(op)) {
    problems.add(
      param,
      `a JSON path takes ${JSON_PATH_OPERATORS.join(', ')} (its values compare as text)`,
    )
    return []
  }
  if (op === 'null') return planNull(field, param, value, problems, path)
  const values = op === 'in' || op === 'not_in' ? splitList(value) : [value]
  if (values.length > definition.limits.maxInValues) {
    problems.add(param, `must list at most ${definition.limits.maxInValues} values`)
    return []
  }
  return [{ field, op, values, path }]
}
