import { UUID_PATTERN } from '../../db/models/columns.ts'
import {
  type ListQueryDefinition,
  type QueryField,
  relationUnderPolicy,
} from '../query/definition.ts'
import {
  ARRAY_OPERATORS,
  COUNT_STRATEGIES,
  FILTER_OPERATORS,
  type FilterOperator,
  JSON_PATH_OPERATORS,
  RANGE_OPERATORS,
  TEXT_OPERATORS,
} from '../query/limits.ts'
import { fieldKindOf } from '../query/values.ts'
import type { JsonSchema, OpenApiParameter } from './types.ts'

/**
 * `fields=`, the readable fields as an enum: the list's and show's alike, as both answer it.
 */
export function fieldsParameter(definition: ListQueryDefinition, where: string): OpenApiParameter {
  return {
    name: 'fields',
    in: 'query',
    required: false,
    style: 'form',
    explode: false,
    description: `Only these fields in ${where} (selected in SQL).`,
    schema: {
      type: 'array',
      items: { type: 'string', enum: definition.fields.map((field) => field.name) },
      uniqueItems: true,
    },
  }
}

/**
 * The query parameters of a list operation whose resource has a query definition: the
 * allowed fields, sort keys, relations and filter operators of that resource as enums, so
 * generated clients and assistants see exactly what the endpoint accepts.
 */
export function listQueryParameters(definition: ListQueryDefinition): OpenApiParameter[] {
  const { limits } = definition
  const sortKeys = [...definition.sortable.keys()].flatMap((name) => [name, `-${name}`])
  const relations = [...definition.relations.keys()]
  const commaList = (values: string[]) => ({
    type: 'array',
    items: { type: 'string', enum: values },
    uniqueItems: true,
  })
  const parameters: OpenApiParameter[] = [
    filterParameter(definition),
    {
      name: 'sort',
      in: 'query',
      required: false,
      style: 'form',
      explode: false,
      description:
        `Comma-separated sort fields, \`-\` for descending (at most ${limits.maxSortKeys}); ` +
        tieBreakerText(definition),
      schema: { ...commaList(sortKeys), maxItems: limits.maxSortKeys },
    },
    fieldsParameter(definition, 'each record'),
  ]
  if (relations.length > 0) {
    parameters.push({
      name: 'include',
      in: 'query',
      required: false,
      style: 'form',
      explode: false,
      description:
        `Related records to attach (one level, at most ${limits.maxIncludes}), each read under ` +
        `its own resource's rules: ${includeScopes(definition)}.`,
      schema: { ...commaList(relations), maxItems: limits.maxIncludes },
    })
  }
  parameters.push(...searchParameters(definition))
  // Cursors need a primary key: a resource without one pages by number only.
  if (definition.keyed) {
    parameters.push({
      name: 'cursor',
      in: 'query',
      required: false,
      description:
        'Cursor paging: empty for the first page, then `meta.next_cursor` / `meta.prev_cursor`. ' +
        'Cannot be combined with `page`.',
      schema: { type: 'string' },
    })
  }
  parameters.push({
    name: 'count',
    in: 'query',
    required: false,
    description:
      '`exact` (default for page numbers), `estimated` (the planner estimate on Postgres above ' +
      `${definition.estimateThreshold} rows, exact below) or \`none\` (default with cursors).`,
    schema: { type: 'string', enum: [...COUNT_STRATEGIES] },
  })
  return parameters
}

/** `filter`: one property per filterable field, the OR group and (in words) JSON paths. */
export function filterParameter(definition: ListQueryDefinition): OpenApiParameter {
  const { limits } = definition
  const filterable = [...definition.filterable.values()]
  const json = filterable.filter((field) => field.structure === 'json').map((field) => field.name)
  const properties: Record<string, JsonSchema> = Object.fromEntries(
    filterable.map((field) => [field.name, filterSchema(field)]),
  )
  if (!definition.filterable.has('or')) {
    properties.or = {
      type: 'array',
      maxItems: limits.maxOrBranches,
      description:
        'The OR group: `filter[or][0][title][contains]=a&filter[or][1][published]=true`. A ' +
        'record matches when it meets every condition of some branch (0, 1, …).',
      items: { type: 'object' },
    }
  }
  return {
    name: 'filter',
    in: 'query',
    required: false,
    style: 'deepObject',
    explode: true,
    description:
      'Filters, combined with AND: `filter[field]=value` (equality) or ' +
      '`filter[field][operator]=value`; `filter[or][n][field][operator]=value` puts a ' +
      `condition in branch n of the OR group (at most ${limits.maxOrBranches} branches), which ` +
      'matches when every condition of some branch does. `in`, `not_in`, `between`, `contains` ' +
      'and `overlaps` of arrays take comma-separated ' +
      `values (\`\\,\` for a comma inside one); \`null\` takes true or false. At most ${limits.maxFilters} ` +
      `filters (OR branches included) and ${limits.maxInValues} values per list. Operators: ${FILTER_OPERATORS.join(', ')}.` +
      (json.length > 0
        ? ` JSON fields (${json.join(', ')}) filter by a path, \`filter[${json[0]}.key.subkey]=value\` ` +
          `(at most ${limits.maxJsonPathDepth} keys; ${JSON_PATH_OPERATORS.join(', ')}; values compare as text).`
        : ''),
    schema: {
      type: 'object',
      // JSON paths are keys of their own (`meta.color`): the object stays open for them.
      additionalProperties: json.length > 0 ? { type: 'string' } : false,
      properties,
    },
  }
}

/** `search`, when the definition names fields to search: a list's parameter and an aggregate's. */
export function searchParameters(definition: ListQueryDefinition): OpenApiParameter[] {
  if (definition.search.length === 0) return []
  return [
    {
      name: 'search',
      in: 'query',
      required: false,
      description: `Records whose ${definition.search.map((f) => f.name).join(', ')} contain the words.`,
      schema: { type: 'string', maxLength: definition.limits.maxValueLength },
    },
  ]
}
/** How the sort parameter's description names the keys always added last. */
function tieBreakerText({ tieBreaker, keyed }: ListQueryDefinition): string {
  const names = tieBreaker.map((field) => `\`${field.name}\``).join(', ')
  if (!keyed) return `without a primary key, the fields ${names} are always added as the last keys.`
  if (tieBreaker.length > 1) return `the primary key (${names}) is always added as the last keys.`
  return `the primary key ${names} is always added as the last key.`
}

/** The operators a field accepts, as `filter[field][op]`. */
export function operatorsOf(field: QueryField): FilterOperator[] {
  if (field.structure) return [...ARRAY_OPERATORS, 'null']
  return FILTER_OPERATORS.filter((op) => {
    if (op === 'overlaps') return false
    if (TEXT_OPERATORS.includes(op)) return field.kind === 'text'
    if (RANGE_OPERATORS.includes(op)) return field.kind !== 'boolean' && field.kind !== 'enum'
    return true
  })
}

function filterSchema(field: QueryField): JsonSchema {
  const list = { type: 'string', description: 'Comma-separated values.' }
  if (field.structure) {
    const element = field.info.element
    const elements =
      field.structure === 'array' && element
        ? `${fieldKindOf(element)} values`
        : 'values (compared as text)'
    return {
      type: 'object',
      additionalProperties: false,
      // Marks a JSON field for generators: `filter[<name>.key]` paths are keys of their own,
      // taking these operators.
      ...(field.structure === 'json' ? { 'x-kiln-json-paths': JSON_PATH_OPERATORS } : {}),
      description:
        field.structure === 'array'
          ? 'An array: contains (every value is an element) or overlaps (some value is).'
          : 'JSON: contains or overlaps when it holds an array; a path for its keys (see filter).',
      properties: {
        contains: { ...list, description: `Comma-separated ${elements}, all present.` },
        overlaps: { ...list, description: `Comma-separated ${elements}, any present.` },
        null: { type: 'boolean' },
      },
    }
  }
  const value = valueSchema(field)
  const properties = Object.fromEntries(
    operatorsOf(field).map((op) => [
      op,
      op === 'null'
        ? { type: 'boolean' }
        : op === 'in' || op === 'not_in' || op === 'between'
          ? list
          : TEXT_OPERATORS.includes(op)
            ? { type: 'string' }
            : value,
    ]),
  )
  return { oneOf: [value, { type: 'object', additionalProperties: false, properties }] }
}

export function valueSchema(field: QueryField): JsonSchema {
  switch (field.kind) {
    case 'integer':
      return { type: 'integer' }
    case 'number':
      return { type: 'number' }
    case 'boolean':
      return { type: 'boolean' }
    case 'timestamp':
    case 'timestamp-string':
      return { type: 'string', format: 'date-time' }
    case 'date-string':
      return { type: 'string', format: 'date' }
    case 'uuid':
      return { type: 'string', format: 'uuid', pattern: UUID_PATTERN.source }
    case 'enum':
      return { type: 'string', enum: field.info.enumValues ?? [] }
    case 'bigint':
    case 'decimal':
      return { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$' }
    default:
      return { type: 'string' }
  }
}

/** `author needs users:read, comments needs comments:read`: what each relation asks of the key. */
function includeScopes(definition: ListQueryDefinition): string {
  return [...definition.relations.values()]
    .map((relation) => {
      const { readScope } = relationUnderPolicy(relation)
      return readScope === undefined ? relation.name : `${relation.name} needs ${readScope}`
    })
    .join(', ')
}
