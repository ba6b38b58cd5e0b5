import type { JsonSchema } from '../openapi/types.ts'

/*
 * OpenAPI schemas and parameters as TypeScript source, for the generated client: the types it
 * declares, the list and aggregate query types, and the names and comments it writes.
 */

/** One documented parameter of an operation. */
export interface Parameter {
  name: string
  in: string
  style?: string
  required?: boolean
  description?: string
  schema?: JsonSchema
}

/** The query parameters as one object type; arrays (`sort`, `fields`, `include`) also as one value. */
export function queryType(parameters: readonly Parameter[]): string {
  const lines = parameters
    .filter((p) => p.in === 'query')
    .map((p) => {
      let type = p.schema ? tsType(p.schema, '  ') : 'string'
      if (p.style === 'deepObject' && p.schema) type = filterType(p.schema)
      else if (p.schema?.type === 'array') {
        const item = tsType((p.schema.items as JsonSchema | undefined) ?? {}, '  ')
        type = `${wrap(item)} | readonly ${wrap(item)}[]`
      }
      const doc = p.description ? `${docComment(p.description, '  ')}\n` : ''
      return `${doc}  ${propertyName(p.name)}${p.required ? '' : '?'}: ${type}`
    })
  return lines.length > 0 ? `{\n${lines.join('\n')}\n}` : '{}'
}

/** The operators whose operand is a list: written comma-separated on the wire. */
const LIST_OPERATORS = new Set(['in', 'not_in', 'between'])

/** The operators of array and JSON fields, whose operand is a list of elements. */
const ELEMENT_OPERATORS = new Set(['contains', 'overlaps'])

/**
 * `filter`: each field a value (equality) or its operators. A list operator takes the
 * comma-separated string the document describes, or an array of the field's values (the
 * client escapes commas inside them).
 */
function filterType(schema: JsonSchema): string {
  const { or, ...fields } = (schema.properties as Record<string, JsonSchema> | undefined) ?? {}
  const lines = Object.entries(fields).map(([name, field]) => {
    const [value, operators] = (field.oneOf as JsonSchema[] | undefined) ?? []
    const elements = field.properties as Record<string, JsonSchema> | undefined
    if (!value && elements?.contains) {
      // An array or JSON field: contains/overlaps take its elements, as a list or comma-separated.
      const ops = Object.entries(elements).map(([op, operand]) => {
        const type = ELEMENT_OPERATORS.has(op)
          ? 'string | readonly (string | number | boolean)[]'
          : tsType(operand, '      ')
        return `      ${propertyName(op)}?: ${type}`
      })
      return `    ${propertyName(name)}?: {\n${ops.join('\n')}\n    }`
    }
    if (!value || !operators) return `    ${propertyName(name)}?: ${tsType(field, '    ')}`
    const valueType = tsType(value, '      ')
    const ops = Object.entries((operators.properties as Record<string, JsonSchema>) ?? {}).map(
      ([op, operand]) => {
        const type = LIST_OPERATORS.has(op)
          ? `string | readonly ${wrap(valueType)}[]`
          : tsType(operand, '      ')
        return `      ${propertyName(op)}?: ${type}`
      },
    )
    return `    ${propertyName(name)}?: ${valueType} | {\n${ops.join('\n')}\n    }`
  })
  // A JSON field's paths (`filter[settings.color]`): keys of their own, compared as text, with
  // the operators the document names (a list operator as a list or comma-separated).
  for (const [name, field] of Object.entries(fields)) {
    const operators = field['x-kiln-json-paths']
    if (!Array.isArray(operators)) continue
    const ops = operators.map((op: string) => {
      const type =
        op === 'null' ? 'boolean' : LIST_OPERATORS.has(op) ? 'string | readonly string[]' : 'string'
      return `      ${propertyName(op)}?: ${type}`
    })
    lines.push(
      `    [path: \`${name.replace(/[`\\$]/g, '\\$&')}.\${string}\`]: string | {\n${ops.join('\n')}\n    } | undefined`,
    )
  }
  // The OR group (`filter[or][n][field]…`): branches of the same fields and operators.
  if (or?.type === 'array') lines.push(`    or?: readonly {\n${lines.join('\n')}\n    }[]`)
  return `{\n${lines.join('\n')}\n  }`
}

/** A JSON schema (OpenAPI 3.0 flavour) as a TypeScript type. */
export function tsType(schema: JsonSchema, indent: string): string {
  const nullable = schema.nullable === true ? ' | null' : ''
  if (typeof schema.$ref === 'string')
    return `${typeName(schema.$ref.split('/').at(-1)!)}${nullable}`
  if (Array.isArray(schema.enum)) {
    return `${schema.enum.map((value) => JSON.stringify(value)).join(' | ')}${nullable}`
  }
  const composed = (key: 'oneOf' | 'anyOf' | 'allOf', joiner: string) => {
    const parts = (schema[key] as JsonSchema[]).map((part) => wrap(tsType(part, indent)))
    return parts.length === 1 ? parts[0]! : parts.join(joiner)
  }
  if (Array.isArray(schema.allOf)) {
    const rest = { ...schema, allOf: undefined, nullable: undefined }
    const own = hasOwnShape(rest) ? [wrap(tsType(rest, indent))] : []
    return `${[composed('allOf', ' & '), ...own].join(' & ')}${nullable}`
  }
  if (Array.isArray(schema.oneOf)) return `${composed('oneOf', ' | ')}${nullable}`
  if (Array.isArray(schema.anyOf)) return `${composed('anyOf', ' | ')}${nullable}`
  switch (schema.type) {
    case 'string':
      return `string${nullable}`
    case 'integer':
    case 'number':
      return `number${nullable}`
    case 'boolean':
      return `boolean${nullable}`
    case 'array': {
      const items = (schema.items as JsonSchema | undefined) ?? {}
      return `${wrap(tsType(items, indent))}[]${nullable}`
    }
    case 'object':
    case undefined:
      if (schema.type === undefined && !hasOwnShape(schema)) return 'unknown'
      return `${objectType(schema, indent)}${nullable}`
    default:
      return 'unknown'
  }
}

function hasOwnShape(schema: JsonSchema): boolean {
  return schema.properties !== undefined || schema.additionalProperties !== undefined
}

function objectType(schema: JsonSchema, indent: string): string {
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {}
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const inner = `${indent}  `
  const lines = Object.entries(properties).map(([name, property]) => {
    const doc =
      typeof property.description === 'string' ? `${docComment(property.description, inner)}\n` : ''
    return `${doc}${inner}${propertyName(name)}${required.has(name) ? '' : '?'}: ${tsType(property, inner)}`
  })
  const extra = schema.additionalProperties
  if (extra && typeof extra === 'object') {
    lines.push(`${inner}[key: string]: ${tsType(extra as JsonSchema, inner)}`)
  } else if (lines.length === 0) {
    return extra === false ? 'Record<string, never>' : 'Record<string, unknown>'
  }
  return `{\n${lines.join('\n')}\n${indent}}`
}

export function wrap(type: string): string {
  return /^[A-Za-z0-9_]+(\[\])*$/.test(type) || type.startsWith('{') ? type : `(${type})`
}

export function propertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name)
}

/** Global names a schema must not shadow in the generated module (`Error` → `ApiError`). */
const GLOBALS = new Set([
  'Error',
  'Date',
  'Record',
  'Array',
  'Object',
  'String',
  'Number',
  'Boolean',
  'Response',
  'Request',
  'Promise',
  'Map',
  'Set',
  'Client',
  'ClientOptions',
  'ApiResult',
  'ApiClientError',
])

export function typeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]/g, '_')
  const safe = /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned
  return GLOBALS.has(safe) ? `Api${safe}` : safe
}

/** `/api/v1/posts/{id}` → `` `/api/v1/posts/${encodeURIComponent(String(id))}` ``. */
export function pathExpression(path: string): string {
  const escaped = path.replace(/[`\\$]/g, (c) => `\\${c}`)
  // biome-ignore lint/suspicious/noTemplateCurlyInString: generated code's template literal
  return `\`${escaped.replace(/\{id\}/g, '${encodeURIComponent(String(id))}')}\``
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\*\//g, '* /').trim()
}

export function docComment(text: string, indent: string): string {
  const lines = text.replace(/\*\//g, '* /').split('\n')
  if (lines.length === 1) return `${indent}/** ${lines[0]} */`
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */`
}

/** The runtime part of the generated client: fetch, the query grammar's encoding, results. */
