import type { z } from 'zod'
import { type FieldErrors, ValidationError } from '../../core/errors.ts'
import { validationMessage } from './validation-messages.ts'

/** Field key for problems with the body as a whole (not a JSON object, for instance). */
export const BODY_FIELD = '_body'

/**
 * Parses `value` with a zod schema; on failure throws a 422 `ValidationError` whose `errors`
 * map each field (dotted path for nested ones) to its messages, worded by
 * `validationMessage`. Unknown fields of a strict object are reported one by one as
 * `is not a known field`.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { error: validationMessage })
  if (result.success) return result.data
  throw new ValidationError(fieldErrors(result.error.issues))
}

/** Groups zod issues by field, with their messages. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  // A Map: field names come from the request (`__proto__`, `constructor`, …).
  const errors = new Map<string, string[]>()
  const add = (field: string, message: string) => {
    const list = errors.get(field) ?? []
    if (!list.includes(message)) list.push(message)
    errors.set(field, list)
  }
  for (const issue of issues) {
    const path = issue.path.map(String).join('.')
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(path ? `${path}.${key}` : key, 'is not a known field')
    } else {
      add(path || BODY_FIELD, issue.message)
    }
  }
  return Object.fromEntries(errors)
}
