import { NotFoundError } from '../../core/errors.ts'

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

/** Throws a 404 when a lookup found nothing; returns the record otherwise. */
export function found<T>(record: T | undefined): T {
  if (record === undefined) throw new NotFoundError()
  return record
}
