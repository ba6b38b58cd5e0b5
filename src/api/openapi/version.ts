import type { JsonSchema, OpenApiDocument } from './types.ts'

/** The parts of an OpenAPI 3.1 document kiln writes: the 3.0 document's, schemas in 2020-12. */
export type OpenApi31Document = Omit<OpenApiDocument, 'openapi'> & {
  openapi: '3.1.0'
  jsonSchemaDialect: string
}

/** The OpenAPI versions kiln serves: 3.0 (the default document) and 3.1. */
export type OpenApiVersion = '3.0' | '3.1'

const DIALECT = 'https://spec.openapis.org/oas/3.1/dialect/base'

/**
 * The same document as OpenAPI 3.1, whose schemas are JSON Schema 2020-12. One conversion
 * serves every operation, so routes added to the 3.0 document appear here unchanged:
 * - `nullable: true` becomes `type: [T, 'null']` (and `null` joins an `enum`), or an
 *   `anyOf` with `{type: 'null'}` beside a `$ref` or a composition;
 * - a schema's `example` becomes `examples: [example]`;
 * - boolean `exclusiveMinimum` / `exclusiveMaximum` become the numbers they qualify.
 * Parameters, responses and everything that is not a schema are kept as they are.
 */
export function toOpenApi31(doc: OpenApiDocument): OpenApi31Document {
  const copy = structuredClone(doc) as unknown as OpenApi31Document
  copy.openapi = '3.1.0'
  copy.jsonSchemaDialect = DIALECT
  const { components } = copy
  for (const [name, schema] of Object.entries(components.schemas)) {
    components.schemas[name] = toSchema31(schema)
  }
  for (const response of Object.values(components.responses)) convertContent(response)
  for (const item of Object.values(copy.paths)) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) {
        parameter.schema = toSchema31(parameter.schema)
      }
      convertContent(operation.requestBody)
      for (const response of Object.values(operation.responses)) convertContent(response)
    }
  }
  return copy
}

/** The schemas of a request body's or a response's `content`, converted in place. */
function convertContent(holder: unknown): void {
  if (!isObject(holder) || !isObject(holder.content)) return
  for (const media of Object.values(holder.content)) {
    if (isObject(media) && isObject(media.schema)) media.schema = toSchema31(media.schema)
  }
}

/** One OpenAPI 3.0 schema object (and every schema inside it) as JSON Schema 2020-12. */
export function toSchema31(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    out[key] = SUBSCHEMA_MAPS.has(key)
      ? mapValues(value, toSchema31)
      : SUBSCHEMA_LISTS.has(key)
        ? Array.isArray(value)
          ? value.map((entry) => (isObject(entry) ? toSchema31(entry) : entry))
          : value
        : SUBSCHEMAS.has(key) && isObject(value)
          ? toSchema31(value)
          : value
  }
  if ('example' in out) {
    const { example, ...rest } = out
    if (!('examples' in rest)) rest.examples = [example]
    return toSchema31Bounds(nullable31(rest))
  }
  return toSchema31Bounds(nullable31(out))
}

const SUBSCHEMAS = new Set(['items', 'not', 'additionalProperties'])
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties'])

function nullable31(schema: JsonSchema): JsonSchema {
  if (!('nullable' in schema)) return schema
  const { nullable, ...rest } = schema
  if (nullable !== true) return rest
  const composed = '$ref' in rest || 'allOf' in rest || 'anyOf' in rest || 'oneOf' in rest
  if (!composed && typeof rest.type === 'string') {
    const typed: JsonSchema = { ...rest, type: [rest.type, 'null'] }
    if (Array.isArray(rest.enum) && !rest.enum.includes(null)) typed.enum = [...rest.enum, null]
    return typed
  }
  if (!composed && Array.isArray(rest.type)) {
    return rest.type.includes('null') ? rest : { ...rest, type: [...rest.type, 'null'] }
  }
  if (!composed && rest.type === undefined) return rest
  // `{type: 'object', allOf: [{$ref}], nullable}`: the value is the composition, or null.
  const { description, title, ...value } = rest
  if (composed && value.type !== undefined && Object.keys(value).length > 1) {
    delete value.type
  }
  // A lone `allOf: [X]` (3.0's way of giving a `$ref` siblings) is X itself.
  const single = Array.isArray(value.allOf) && value.allOf.length === 1 ? value.allOf[0] : undefined
  const inner = single !== undefined && Object.keys(value).length === 1 ? single : value
  return {
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    anyOf: [inner, { type: 'null' }],
  }
}

function toSchema31Bounds(schema: JsonSchema): JsonSchema {
  const out = { ...schema }
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] !== 'boolean') continue
    if (out[flag] === true && typeof out[bound] === 'number') {
      out[flag] = out[bound]
      delete out[bound]
    } else delete out[flag]
  }
  return out
}

function mapValues(value: unknown, fn: (schema: JsonSchema) => JsonSchema): unknown {
  if (!isObject(value)) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [key, isObject(entry) ? fn(entry) : entry]),
  )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
