import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto'
import { digestsEqual } from '../../core/http/constant-time.ts'
import type { Secret } from '../../core/secret.ts'

/** What a cursor says: the sort-key values of a boundary record and which way to read. */
export interface CursorPosition {
  /** Values of the sort keys (the primary key last), as JSON. */
  values: unknown[]
  direction: 'next' | 'prev'
}

const VERSION = 1
const MAC_LENGTH = 16

/**
 * An opaque cursor: base64url JSON of the position and the query it belongs to, and a MAC
 * over both. The query's fingerprint (sort, filters, search) is inside, so a cursor replayed
 * with another sort or filter is refused instead of silently skipping records.
 */
export function encodeCursor(
  position: CursorPosition,
  fingerprint: string,
  secret: Secret,
): string {
  const payload = Buffer.from(
    JSON.stringify([
      VERSION,
      position.direction === 'next' ? 'n' : 'p',
      fingerprint,
      position.values,
    ]),
  ).toString('base64url')
  return `${payload}.${mac(payload, secret)}`
}

export type CursorProblem = 'malformed' | 'other-query'

/** Reads a cursor back; returns why it cannot be used instead of throwing. */
export function decodeCursor(
  cursor: string,
  fingerprint: string,
  secret: Secret,
): CursorPosition | CursorProblem {
  const [payload, signature, extra] = cursor.split('.')
  if (!payload || !signature || extra !== undefined || cursor.length > 4096) return 'malformed'
  // A MAC's length is public: compared as it is, in constant time.
  if (!digestsEqual(Buffer.from(signature), Buffer.from(mac(payload, secret)))) return 'malformed'
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return 'malformed'
  }
  if (!Array.isArray(decoded) || decoded.length !== 4 || decoded[0] !== VERSION) return 'malformed'
  const [, direction, print, values] = decoded
  if ((direction !== 'n' && direction !== 'p') || !Array.isArray(values)) return 'malformed'
  if (print !== fingerprint) return 'other-query'
  return { values, direction: direction === 'n' ? 'next' : 'prev' }
}

/** Each secret as a key object, made once: HMAC with a string key imports the key every time. */
const keys = new WeakMap<Secret, KeyObject>()

function mac(payload: string, secret: Secret): string {
  let key = keys.get(secret)
  if (!key) {
    key = createSecretKey(Buffer.from(secret.reveal()))
    keys.set(secret, key)
  }
  return createHmac('sha256', key)
    .update(payload)
    .digest('base64url')
    .slice(0, MAC_LENGTH * 2)
}

/** A short, stable digest of a query's shape (sort, filters, search), for cursors and count keys. */
export function fingerprintOf(parts: unknown): string {
  return hash('sha256', JSON.stringify(parts), 'base64url').slice(0, 16)
}
