import { NotFoundError } from '../../core/errors.ts'
import { UUID_PATTERN } from '../../db/models/columns.ts'

/** Options of `parseId`. */
export interface ParseIdOptions {
  /** Largest identifier the column holds (default 2^53 − 1; 2147483647 for a 32-bit column). */
  max?: number
}

/**
 * The numeric `{id}` of a record route. Anything that is not a whole number the column can
 * hold names no record, so it answers 404 like an identifier that is not in the table.
 */
export function parseId(
  raw: string | undefined,
  { max = Number.MAX_SAFE_INTEGER }: ParseIdOptions = {},
): number {
  if (raw === undefined || !/^[0-9]{1,16}$/.test(raw)) throw new NotFoundError()
  const id = Number(raw)
  if (id > max) throw new NotFoundError()
  return id
}

/** The `{id}` of a `bigint` (mode `bigint`) primary key: 1 to 2^63 − 1, else 404. */
export function parseBigIntId(raw: string | undefined): bigint {
  if (raw === undefined || !/^[0-9]{1,19}$/.test(raw)) throw new NotFoundError()
  const id = BigInt(raw)
  if (id > 2n ** 63n - 1n) throw new NotFoundError()
  return id
}

/** The `{id}` of a `uuid` primary key, lower-cased; anything else names no record: 404. */
export function parseUuid(raw: string | undefined): string {
  if (raw === undefined || !UUID_PATTERN.test(raw)) throw new NotFoundError()
  return raw.toLowerCase()
}

/** Options of `parseTextId`. */
export interface ParseTextIdOptions {
  /** The column's length (`varchar(n)`); a longer `{id}` names no record. Default 1000. */
  maxLength?: number
}

/**
 * The `{id}` of a text primary key: any string the column can hold. NUL characters (no
 * database stores them) and over-long values name no record: 404, never a driver error.
 */
export function parseTextId(
  raw: string | undefined,
  { maxLength = 1000 }: ParseTextIdOptions = {},
): string {
  if (raw === undefined || raw === '' || raw.length > maxLength || raw.includes('\0')) {
    throw new NotFoundError()
  }
  return raw
}

/** Throws a 404 when a lookup found nothing; returns the record otherwise. */
export function found<T>(record: T | undefined): T {
  if (record === undefined) throw new NotFoundError()
  return record
}
