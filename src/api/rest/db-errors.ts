import { KilnError, ValidationError } from '../../core/errors.ts'

/** 409: the request conflicts with the records as they are (e.g. still referenced). */
export class ConflictError extends KilnError {
  override readonly code = 'conflict'
  override readonly status = 409
}

interface DriverError {
  code?: unknown
  detail?: unknown
  column?: unknown
  message?: unknown
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
  const driver = driverError(error)
  if (driver) {
    const translated = translate(driver)
    if (translated) throw translated
  }
  throw error
}

/**
 * The `.catch` of a delete: a record other records still reference answers 409 (SQLite does
 * not say which way a foreign key failed, so deletes use this one).
 */
export function rejectBlockedDelete(error: unknown): never {
  const driver = driverError(error)
  if (driver && isReferenceViolation(driver)) {
    throw new ConflictError('The record is still referenced by other records')
  }
  return rejectConstraintViolation(error)
}

/**
 * A foreign key blocked the write: 23503, or 23001 for `ON DELETE RESTRICT` on Postgres;
 * SQLite reports a RESTRICT action as a trigger constraint with the foreign-key message.
 */
function isReferenceViolation(driver: DriverError): boolean {
  if (driver.code === '23503' || driver.code === '23001') return true
  if (driver.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return true
  return (
    driver.code === 'SQLITE_CONSTRAINT_TRIGGER' &&
    typeof driver.message === 'string' &&
    driver.message.includes('FOREIGN KEY constraint failed')
  )
}

function driverError(error: unknown): DriverError | undefined {
  // drizzle wraps driver errors ("Failed query: …") with the original as `cause`.
  let current: unknown = error
  for (let depth = 0; depth < 4 && current; depth++) {
    const candidate = current as DriverError
    if (typeof candidate.code === 'string') return candidate
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

function translate(error: DriverError): KilnError | undefined {
  const code = String(error.code)
  const message = typeof error.message === 'string' ? error.message : ''
  const detail = typeof error.detail === 'string' ? error.detail : ''
  const pgKeyField = /Key \(([^)]+)\)/.exec(detail)?.[1]?.split(',')[0]?.trim()
  const sqliteField = /constraint failed: \w+\.(\w+)/.exec(message)?.[1]
  const column = typeof error.column === 'string' ? error.column : undefined
  const field = pgKeyField ?? sqliteField ?? column ?? 'record'

  if (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  ) {
    return new ValidationError({ [field]: ['has already been taken'] })
  }
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    // On delete (or an update of a referenced key) Postgres says the row is still referenced.
    if (/still referenced/.test(detail) || /update or delete/.test(message)) {
      return new ConflictError('The record is still referenced by other records')
    }
    return new ValidationError({
      [pgKeyField ?? 'record']: ['does not reference an existing record'],
    })
  }
  if (code === '23502' || code === 'SQLITE_CONSTRAINT_NOTNULL') {
    return new ValidationError({ [field]: ['is required'] })
  }
  if (code === '23514' || code === 'SQLITE_CONSTRAINT_CHECK') {
    return new ValidationError({ [field]: ['is not allowed'] })
  }
  if (
    code === '22001' ||
    code === '22003' ||
    code === '22P02' ||
    code === '22007' ||
    code === '22008'
  ) {
    return new ValidationError({ [column ?? 'record']: ['is out of range for its column'] })
  }
  return undefined
}
