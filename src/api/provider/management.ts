import { type Clock, systemClock } from '../../core/clock.ts'
import { BadRequestError, NotFoundError } from '../../core/errors.ts'
import type { Database } from '../../db/database.ts'
import {
  API_KEY_PREFIX_LENGTH,
  type ApiKeyEnv,
  digestApiKey,
  digestMatches,
  type GeneratedApiKey,
  generateApiKey,
  isApiKeyShaped,
} from '../keys/api-key.ts'
import {
  type ApiKeyRecord,
  findKeysByPrefix,
  insertKeyRow,
  markRevoked,
  selectKeys,
} from './key-store.ts'
import { emitLocalKeyChange } from './local-changes.ts'
import { isValidScope } from './scopes.ts'

export type { ApiKeyRecord }

/** Whether a key is usable: `active`, or why not. */
export type ApiKeyStatus = 'active' | 'revoked' | 'expired'

/** A key's status at `now`: revoked first, then expired, else active. */
export function apiKeyStatus(record: ApiKeyRecord, now: number = Date.now()): ApiKeyStatus {
  if (record.revokedAt !== null) return 'revoked'
  if (record.expiresAt !== null && record.expiresAt.getTime() <= now) return 'expired'
  return 'active'
}

/** Options of `createApiKey`. */
export interface NewApiKeyOptions {
  /** A label for people: 1 to 255 characters, no control characters. */
  name: string
  env?: ApiKeyEnv
  scopes?: string[]
  expiresAt?: Date | null
  clock?: Clock
}

/** A key made by `createApiKey`: the raw key (shown once) and its stored record. */
export interface CreatedApiKey extends GeneratedApiKey {
  record: ApiKeyRecord
}

/** Checks a key's name and scopes; returns the first problem, or undefined. */
export function apiKeyOptionsProblem(options: {
  name: string
  scopes?: string[]
  expiresAt?: Date | null
}): string | undefined {
  const { name, scopes = [], expiresAt } = options
  if (typeof name !== 'string' || name.trim() === '') return 'the name must not be empty'
  if (name.length > 255) return 'the name must be at most 255 characters'
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the name must not contain control characters'
  if (!Array.isArray(scopes)) return 'scopes must be a list'
  const bad = scopes.find((scope) => !isValidScope(scope))
  if (bad !== undefined) {
    return `invalid scope ${JSON.stringify(bad)}: use letters, digits and _ - . : / * (at most 100 characters)`
  }
  if (expiresAt !== undefined && expiresAt !== null && Number.isNaN(expiresAt.getTime())) {
    return 'the expiry is not a valid date'
  }
  return undefined
}

/** The `scopes` column value for a list: a JSON array, or null when there are none. */
export function scopesColumn(scopes: string[] | undefined): string | null {
  return scopes && scopes.length > 0 ? JSON.stringify([...new Set(scopes)]) : null
}

/**
 * Mints a key and stores its record (prefix and hash only). The raw key is in the result and
 * nowhere else: show it to its owner once.
 * @example
 * ```ts
 * const { rawKey, record } = await createApiKey(database, {
 *   name: 'ci-bot',
 *   scopes: ['posts:read'],
 * })
 * ```
 */
export async function createApiKey(
  database: Database,
  options: NewApiKeyOptions,
): Promise<CreatedApiKey> {
  const problem = apiKeyOptionsProblem(options)
  if (problem) throw new TypeError(`createApiKey: ${problem}`)
  const generated = generateApiKey(options.env ?? 'live')
  const record = await insertKeyRow(database, {
    name: options.name,
    prefix: generated.prefix,
    hashedKey: generated.hashedKey,
    scopes: scopesColumn(options.scopes),
    expiresAt: options.expiresAt ?? null,
    createdAt: new Date((options.clock ?? systemClock).now()),
  })
  return { ...generated, record }
}

/** Every key, oldest first. Records carry no hash. */
export function listApiKeys(database: Database): Promise<ApiKeyRecord[]> {
  return selectKeys(database)
}

/** What `revokeApiKey` did. */
export interface RevokeResult {
  record: ApiKeyRecord
  /** False when the key was already revoked (its `revoked_at` is left as it was). */
  changed: boolean
}

/**
 * Revokes one key, named by its id, its 16-character prefix, or the raw key itself. Every
 * instance refuses the key from its next request: providers in this process are told before
 * this returns; others hear it from the database (see docs/api-keys.md). Throws
 * `NotFoundError` when nothing matches and `BadRequestError` when a prefix names several
 * unrevoked keys (revoke by id then).
 */
export async function revokeApiKey(
  database: Database,
  target: number | string,
  options: { clock?: Clock } = {},
): Promise<RevokeResult> {
  const id = await resolveTarget(database, target)
  const at = new Date((options.clock ?? systemClock).now())
  const result = await markRevoked(database, id, at)
  if (!result) throw new NotFoundError(`No API key with id ${id}`)
  emitLocalKeyChange(database, id)
  return result
}

async function resolveTarget(database: Database, target: number | string): Promise<number> {
  if (typeof target === 'number') {
    if (!Number.isSafeInteger(target) || target < 1) throw new BadRequestError('Invalid API key id')
    return target
  }
  const value = target.trim()
  if (/^\d{1,15}$/.test(value)) return Number(value)
  if (isApiKeyShaped(value)) {
    const digest = digestApiKey(value)
    const rows = await findKeysByPrefix(database, value.slice(0, API_KEY_PREFIX_LENGTH))
    const row = rows.find((candidate) => digestMatches(candidate.hashedKey, digest))
    if (!row) throw new NotFoundError('No API key matches that key')
    return row.id
  }
  if (value.length !== API_KEY_PREFIX_LENGTH || !/^kl_(live|test)_[0-9A-Za-z]{8}$/.test(value)) {
    throw new BadRequestError(
      'Name the key by its id, its 16-character prefix (kl_live_XXXXXXXX) or the key itself',
    )
  }
  const rows = await findKeysByPrefix(database, value)
  if (rows.length === 0) throw new NotFoundError(`No API key with prefix ${value}`)
  const candidates = rows.filter((row) => row.revokedAt === null)
  if (candidates.length > 1) {
    throw new BadRequestError(
      `Several keys share prefix ${value} (ids ${candidates.map((row) => row.id).join(', ')}): revoke by id`,
    )
  }
  return (candidates[0] ?? rows[0])!.id
}
