import { is } from 'drizzle-orm'
import { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core'
import type { z } from 'zod'
import {
  BadRequestError,
  type FieldErrors,
  NotFoundError,
  ValidationError,
} from '../../core/errors.ts'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import { type JsonBodyOptions, readJson } from './body.ts'
import { BODY_FIELD, validate } from './validation.ts'

/** Most records one bulk request writes (create, update or delete); more are a 422. */
export const MAX_BULK_RECORDS = 100

/** Options of `parseCreateBody` and `parseBulkUpdate`. */
export interface BulkOptions extends JsonBodyOptions {
  /** Most records in one request. Default `MAX_BULK_RECORDS` (100). */
  max?: number
}

/** What a create body gave: one record (an object) or many (an array of them). */
export interface CreateBody<V> {
  inputs: V[]
  /** True for an array body: the answer is `{ data: [...] }`. */
  many: boolean
}

/**
 * The body of `POST /{resource}`: one record as an object, or up to `max` of them as an array,
 * each validated with `schema`. An item's errors name its index (`0.title`), as Laravel's
 * array validation does. `prepare` turns each valid input into the values to insert (hashing a
 * password, say) once every item passed.
 */
export async function parseCreateBody<S extends z.ZodType, V = z.output<S>>(
  request: Request,
  schema: S,
  prepare?: (input: z.output<S>) => V | Promise<V>,
  options: BulkOptions = {},
): Promise<CreateBody<V>> {
  const body = await readJson(request, options)
  const many = Array.isArray(body)
  const inputs = many
    ? validateEach(schema, checkCount(body, options.max))
    : [validate(schema, body)]
  return { inputs: await prepareAll(inputs, prepare), many }
}

/** One item of a bulk update: the record's id and the changes the body gave for it. */
export interface BulkChange<Id, V> {
  id: Id
  input: V
}

/**
 * The body of `PATCH /{resource}`: an array of `{ id, ...changes }`, each change set validated
 * with the update schema and holding at least one field. `parseId` is the `{id}` parser of the
 * record routes (an id it refuses names no record: 404 with the item's index). An id given
 * twice is a 422. `If-Match` belongs to one record and is refused here (400).
 */
export async function parseBulkUpdate<S extends z.ZodType, Id, V = z.output<S>>(
  request: Request,
  schema: S,
  parseId: (raw: string) => Id,
  prepare?: (input: z.output<S>) => V | Promise<V>,
  options: BulkOptions = {},
): Promise<BulkChange<Id, V>[]> {
  refuseIfMatch(request)
  const items = checkCount(await readJson(request, options), options.max)
  const errors: FieldErrors = {}
  const seen = new Set<string>()
  const changes: Array<BulkChange<Id, z.output<S>>> = []
  items.forEach((item, index) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      errors[String(index)] = ['must be an object']
      return
    }
    const { id: raw, ...fields } = item as Record<string, unknown>
    if (typeof raw !== 'number' && typeof raw !== 'string') {
      errors[`${index}.id`] = [raw === undefined ? 'is required' : 'must be a string or a number']
      return
    }
    const id = parseAt(parseId, String(raw), index)
    if (seen.has(String(id))) errors[`${index}.id`] = ['is given twice']
    seen.add(String(id))
    if (Object.keys(fields).length === 0) errors[String(index)] = ['must change at least one field']
    const input = validateAt(schema, fields, index, errors)
    if (input !== undefined) changes.push({ id, input: input.value })
  })
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  const values = await prepareAll(
    changes.map((change) => change.input),
    prepare,
  )
  return changes.map((change, index) => ({ id: change.id, input: values[index]! }))
}

/**
 * The `ids` query parameter of `DELETE /{resource}?ids=1,2,3`: comma-separated, at most `max`,
 * each read by the record routes' `{id}` parser (one it refuses names no record: 404 with its
 * index). Absent or empty is a 422, so no request deletes everything; an id given twice too.
 */
export function parseIdList<Id>(
  request: Request,
  parseId: (raw: string) => Id,
  options: { max?: number } = {},
): Id[] {
  refuseIfMatch(request)
  const raw = new URL(request.url).searchParams.get('ids')
  if (!raw) throw new ValidationError({ ids: ['is required'] })
  const parts = raw.split(',')
  const max = options.max ?? MAX_BULK_RECORDS
  if (parts.length > max) throw new ValidationError({ ids: [`must name at most ${max} records`] })
  const ids = parts.map((part, index) => parseAt(parseId, part, index))
  if (new Set(ids.map(String)).size !== ids.length) {
    throw new ValidationError({ ids: ['must not name a record twice'] })
  }
  return ids
}

type TransactionOf<D> = D extends { transaction(run: (tx: infer T) => infer _R): unknown }
  ? T
  : never

/**
 * Runs one write per item in one transaction: all or none. Each write returns the rows it
 * changed (`.returning()`); a write that changed none rolls everything back with a 404 naming
 * the item's index. On SQLite the transaction is better-sqlite3's synchronous one, so `write`
 * must only build the statement (no `await` inside).
 */
export async function writeEach<D extends PostgresDb | SqliteDb, I, R>(
  db: D,
  items: readonly I[],
  write: (tx: TransactionOf<D>, item: I) => PromiseLike<R[]>,
): Promise<R[]> {
  if (is(db, BaseSQLiteDatabase)) {
    const sqlite = db as SqliteDb
    return sqlite.transaction((tx) =>
      items.map((item, index) => {
        const query = write(tx as TransactionOf<D>, item) as unknown as { all(): R[] }
        return foundAt(query.all()[0], index)
      }),
    )
  }
  const postgres = db as { transaction<T>(run: (tx: unknown) => Promise<T>): Promise<T> }
  return postgres.transaction(async (tx) => {
    const rows: R[] = []
    for (const [index, item] of items.entries()) {
      rows.push(foundAt((await write(tx as TransactionOf<D>, item))[0], index))
    }
    return rows
  })
}

function foundAt<R>(row: R | undefined, index: number): R {
  if (row === undefined)
    throw new NotFoundError(`Not Found: no record has the id at index ${index}`)
  return row
}

function parseAt<Id>(parseId: (raw: string) => Id, raw: string, index: number): Id {
  try {
    return parseId(raw)
  } catch (error) {
    if (error instanceof NotFoundError) foundAt(undefined, index)
    throw error
  }
}

function checkCount(body: unknown, max = MAX_BULK_RECORDS): unknown[] {
  if (!Array.isArray(body)) throw new ValidationError({ [BODY_FIELD]: ['must be an array'] })
  if (body.length === 0) throw new ValidationError({ [BODY_FIELD]: ['must not be empty'] })
  if (body.length > max) {
    throw new ValidationError({ [BODY_FIELD]: [`must hold at most ${max} records`] })
  }
  return body
}

function validateEach<S extends z.ZodType>(schema: S, items: unknown[]): Array<z.output<S>> {
  const errors: FieldErrors = {}
  const inputs = items.map((item, index) => validateAt(schema, item, index, errors)?.value)
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return inputs as Array<z.output<S>>
}

/** One item validated; its errors are added to `errors` under its index (`2.title`). */
function validateAt<S extends z.ZodType>(
  schema: S,
  item: unknown,
  index: number,
  errors: FieldErrors,
): { value: z.output<S> } | undefined {
  try {
    return { value: validate(schema, item) }
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    for (const [field, messages] of Object.entries(error.errors)) {
      errors[field === BODY_FIELD ? String(index) : `${index}.${field}`] = messages
    }
    return undefined
  }
}

async function prepareAll<T, V>(
  inputs: T[],
  prepare: ((input: T) => V | Promise<V>) | undefined,
): Promise<V[]> {
  if (!prepare) return inputs as unknown as V[]
  return Promise.all(inputs.map(prepare))
}

function refuseIfMatch(request: Request): void {
  if (request.headers.has('if-match')) {
    throw new BadRequestError('If-Match applies to one record: send it to /{resource}/{id}')
  }
}
