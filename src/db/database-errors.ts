/**
 * What a failed statement says about the data, read from the driver's error code (Postgres
 * SQLSTATE or SQLite extended result code): the one place kiln tells a constraint or data error
 * (the caller's fault, a 4xx) from a real failure of the database (a 500, logged).
 *
 * - `unique`: 23505, a UNIQUE or PRIMARY KEY constraint
 * - `foreign-key`: 23503, a reference to a missing record, or (`stillReferenced`) a delete or
 *   key update of a record others reference
 * - `restrict`: 23001 (`ON DELETE RESTRICT`), SQLite's RESTRICT trigger
 * - `not-null`: 23502; `check`: 23514
 * - `out-of-range`: 22001 too long, 22003 numeric out of range, 22P02 bad text representation,
 *   22007/22008 bad or out-of-range date/time
 * - `data`: any other data exception (22xxx, SQLITE_MISMATCH, SQLITE_TOOBIG)
 * - `constraint`: any other integrity constraint (23xxx, SQLITE_CONSTRAINT_*)
 *
 * Anything else (a refused connection, a timeout, a missing table) is no data error: undefined.
 */
export type DatabaseErrorKind =
  | 'unique'
  | 'foreign-key'
  | 'restrict'
  | 'not-null'
  | 'check'
  | 'out-of-range'
  | 'data'
  | 'constraint'

/**
 * A driver error `classifyDatabaseError` recognised as the data's fault (a constraint, a bad
 * value).
 */
export interface DatabaseDataError {
  kind: DatabaseErrorKind
  /** The driver's code, e.g. `23505` or `SQLITE_CONSTRAINT_UNIQUE`. */
  code: string
  /** The field the database blames, when it says: Postgres' key detail or column, SQLite's message. */
  field: string | undefined
  /**
   * Every column of the key the database names (`['tool_id', 'starts_on']` for a unique pair);
   * `[field]` for a single column, empty when it names none.
   */
  fields: string[]
  /** Postgres' `column` of the error, when given. */
  column: string | undefined
  /** `foreign-key` only: the record is still referenced (a delete or key update was blocked). */
  stillReferenced: boolean
}

interface DriverError {
  code?: unknown
  detail?: unknown
  column?: unknown
  message?: unknown
}

const OUT_OF_RANGE = new Set(['22001', '22003', '22P02', '22007', '22008'])

/** The data error a failed statement reports, or undefined when it is none. */
export function classifyDatabaseError(error: unknown): DatabaseDataError | undefined {
  const driver = driverError(error)
  if (!driver) return undefined
  const kind = kindOf(driver)
  if (!kind) return undefined
  const code = String(driver.code)
  const message = typeof driver.message === 'string' ? driver.message : ''
  const detail = typeof driver.detail === 'string' ? driver.detail : ''
  const column = typeof driver.column === 'string' ? driver.column : undefined
  const keyFields = postgresKeyFields(detail) ?? sqliteKeyFields(message)
  const fields = keyFields ?? (column === undefined ? [] : [column])
  return {
    kind,
    code,
    field: fields[0],
    fields,
    column,
    stillReferenced:
      kind === 'foreign-key' &&
      (/still referenced/.test(detail) || /update or delete/.test(message)),
  }
}

/** `Key (tool_id, starts_on)=(1, 2025-03-01) already exists.` → the key's plain column names. */
function postgresKeyFields(detail: string): string[] | undefined {
  const key = /^Key \((.+?)\)=\(/.exec(detail)?.[1]
  return key === undefined ? undefined : plainNames(key.split(', ').map(unquote))
}

/** `UNIQUE constraint failed: bookings.tool_id, bookings.starts_on` → the column names. */
function sqliteKeyFields(message: string): string[] | undefined {
  const list = /constraint failed: (.+)$/.exec(message)?.[1]
  if (list === undefined) return undefined
  // `table.column` each; a CHECK names its constraint instead, which is no field.
  const names = list.split(', ').map((name) => /^\w+\.(\w+)$/.exec(name)?.[1] ?? '')
  return plainNames(names)
}

/** Column names only: an expression index (`lower(email::text)`) names no field. */
function plainNames(names: string[]): string[] | undefined {
  return names.length > 0 && names.every((name) => /^\w+$/.test(name)) ? names : undefined
}

function unquote(name: string): string {
  return /^".*"$/.test(name) ? name.slice(1, -1).replaceAll('""', '"') : name
}

function kindOf(driver: DriverError): DatabaseErrorKind | undefined {
  const code = driver.code as string
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') return 'unique'
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return 'unique'
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'foreign-key'
  if (code === '23001') return 'restrict'
  if (
    code === 'SQLITE_CONSTRAINT_TRIGGER' &&
    typeof driver.message === 'string' &&
    driver.message.includes('FOREIGN KEY constraint failed')
  ) {
    return 'restrict'
  }
  if (code === '23502' || code === 'SQLITE_CONSTRAINT_NOTNULL') return 'not-null'
  if (code === '23514' || code === 'SQLITE_CONSTRAINT_CHECK') return 'check'
  if (OUT_OF_RANGE.has(code)) return 'out-of-range'
  if (/^22\w{3}$/.test(code) || code === 'SQLITE_MISMATCH' || code === 'SQLITE_TOOBIG') {
    return 'data'
  }
  if (/^23\w{3}$/.test(code) || /^SQLITE_CONSTRAINT\w*$/.test(code)) return 'constraint'
  return undefined
}

/** The driver's error: drizzle wraps it ("Failed query: …") with the original as `cause`. */
function driverError(error: unknown): DriverError | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current; depth++) {
    const candidate = current as DriverError
    if (typeof candidate.code === 'string') return candidate
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}
