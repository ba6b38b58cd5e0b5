import { z } from 'zod'
import type { JsonSchema } from './types.ts'

/** A zod schema as an OpenAPI 3.0 schema object (requests by their input side). */
export function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io,
    unrepresentable: 'any',
  }) as JsonSchema
  return typedNullables(rest) as JsonSchema
}

/**
 * OpenAPI 3.0 allows `nullable` only beside a `type`, but zod writes `{ anyOf, nullable }` for
 * a nullable union and `{ nullable }` for a nullable unknown. Moves `nullable` into each branch
 * of the union, and drops it where any value (null included) is already allowed.
 */
function typedNullables(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(typedNullables)
  if (node === null || typeof node !== 'object') return node
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) out[key] = typedNullables(value)
  if (out.nullable !== true || 'type' in out) return out
  const { nullable: _nullable, ...rest } = out
  const branches = rest.anyOf ?? rest.oneOf
  if (!Array.isArray(branches)) return rest
  const key = rest.anyOf ? 'anyOf' : 'oneOf'
  return { ...rest, [key]: branches.map((branch) => nullableBranch(branch)) }
}

function nullableBranch(branch: unknown): unknown {
  if (branch === null || typeof branch !== 'object') return branch
  const schema = branch as JsonSchema
  if ('type' in schema) return { ...schema, nullable: true }
  return typedNullables({ ...schema, nullable: true })
}
