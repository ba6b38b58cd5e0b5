import { KilnError, ValidationError } from '../../core/errors.ts'
import { classifyDatabaseError, type DatabaseDataError } from '../../db/database-errors.ts'

/** 409: the request conflicts with the records as they are (e.g. still referenced). */
export class ConflictError extends KilnError {
  override readonly code = 'conflict'
}

/**
 * Turns a constraint violation of the database into the 4xx it is, and rethrows anything else
 * (a real failure, answered 500 and logged). Use it as the `.catch` of a write:
 *
 * ```ts
 * const [row] = await db.insert(posts).values(input).returning().catch(rejectConstraintViolation)
 * ```
 *
 * Unique and foreign-key violations, NOT NULL, CHECK and out-of-range values become a 422
 * naming the field when the database says which; a delete blocked by a reference becomes 409.
 */
export function rejectConstraintViolation(error: unknown): never {
  const classified = classifyDatabaseError(error)
  const translated = classified && translate(classified)
  // The driver's error stays its cause: the MCP tools, writing through the same operations,
  // word a violation their own way (mcp/data/database-errors.ts).
  if (translated) throw Object.assign(translated, { cause: error })
  throw error
}

/**
 * The `.catch` of a delete: a record other records still reference answers 409 (SQLite does
 * not say which way a foreign key failed, so deletes use this one).
 */
export function rejectBlockedDelete(error: unknown): never {
  const kind = classifyDatabaseError(error)?.kind
  if (kind === 'foreign-key' || kind === 'restrict') {
    throw new ConflictError('The record is still referenced by other records', { cause: error })
  }
  return rejectConstraintViolation(error)
}

function translate(error: DatabaseDataError): KilnError | undefined {
  const field = error.field ?? 'record'
  switch (error.kind) {
    case 'unique':
      return new ValidationError(takenErrors(error.fields))
    case 'foreign-key':
      // On delete (or an update of a referenced key) Postgres says the row is still referenced.
      if (error.stillReferenced) {
        return new ConflictError('The record is still referenced by other records')
      }
      return new ValidationError({ [field]: ['does not reference an existing record'] })
    case 'not-null':
      return new ValidationError({ [field]: ['is required'] })
    case 'check':
      return new ValidationError({ [field]: ['is not allowed'] })
    case 'out-of-range':
      return new ValidationError({ [error.column ?? 'record']: ['is out of range for its column'] })
    default:
      // Other data and constraint errors stay 500s: the generated requests validate before
      // writing, so one reaching the database is a failure worth a log line.
      return undefined
  }
}

/**
 * `{ email: ['has already been taken'] }`; for a unique set of columns each one names the
 * others (`{ tool_id: ['has already been taken with this starts_on'], starts_on: [...] }`):
 * neither value is taken alone, only the pair.
 */
function takenErrors(fields: readonly string[]): Record<string, string[]> {
  if (fields.length === 0) return { record: ['has already been taken'] }
  const errors: Record<string, string[]> = {}
  for (const field of fields) {
    const others = fields.filter((other) => other !== field)
    errors[field] = [
      others.length === 0
        ? 'has already been taken'
        : `has already been taken with this ${others.join(' and ')}`,
    ]
  }
  return errors
}
