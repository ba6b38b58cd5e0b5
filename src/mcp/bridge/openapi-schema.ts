/** OpenAPI 3.0 documents to self-contained JSON Schemas for tool inputs. */

export type JsonObject = Record<string, unknown>

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Follows a local `$ref` (`#/components/…`) one level. */
export function refResolver(document: JsonObject): (value: unknown) => unknown {
  return function resolveRef(value: unknown, seen = new Set<string>()): unknown {
    if (!isObject(value) || typeof value.$ref !== 'string') return value
    const ref = value.$ref
    if (!ref.startsWith('#/') || seen.has(ref)) return {}
    seen.add(ref)
    let target: unknown = document
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
      target = isObject(target) ? target[key] : undefined
    }
    return resolveRef(target, seen)
  }
}

/** Inlines every `$ref` of a schema (a recursive one is cut off as `{}`), copying as it goes. */
export function resolveDeep(
  value: unknown,
  resolve: (value: unknown) => unknown,
  stack: unknown[] = [],
): unknown {
  const resolved = resolve(value)
  if (Array.isArray(resolved)) return resolved.map((item) => resolveDeep(item, resolve, stack))
  if (!isObject(resolved)) return resolved
  if (stack.includes(resolved) || stack.length > 32) return {}
  const out: JsonObject = {}
  for (const [key, child] of Object.entries(resolved))
    out[key] = resolveDeep(child, resolve, [...stack, resolved])
  return out
}

/** OpenAPI 3.0 schema → JSON Schema: `nullable: true` becomes a `null` type. */
export function toJsonSchema(schema: unknown): JsonObject {
  if (!isObject(schema)) return {}
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'example' || key === 'xml' || key === 'externalDocs') continue
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, toJsonSchema(child)]),
      )
    } else if (
      (key === 'items' || key === 'additionalProperties' || key === 'not') &&
      isObject(value)
    ) {
      out[key] = toJsonSchema(value)
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = value.map(toJsonSchema)
    } else {
      out[key] = value
    }
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null']
  return out
}

export function jsonBodySchema(
  content: unknown,
  resolve: (value: unknown) => unknown,
): JsonObject | undefined {
  if (!isObject(content)) return undefined
  const media = Object.entries(content).find(([type]) =>
    /^application\/(.+\+)?json/i.test(type),
  )?.[1]
  if (!isObject(media)) return undefined
  return toJsonSchema(resolveDeep(media.schema ?? {}, resolve))
}
