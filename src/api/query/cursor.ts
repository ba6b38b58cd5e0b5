import { createHmac, createSecretKey, hash, type KeyObject, randomBytes } from 'node:crypto'
import { digestsEqual } from '../../core/http/constant-time.ts'
import { Secret } from '../../core/secret.ts'

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

/** The app's key (`APP_KEY`), or this process's random one until `setCursorKey` names it. */
let appKey: Secret | undefined
const tableKeys = new Map<string, Secret>()

/**
 * Makes the app's key (`APP_KEY`, `config.appKey`) sign the cursors of every list query that
 * has no `cursorSecret` of its own; call it once at start-up, before serving. Without it each
 * process signs with a random key: cursors then last as long as the process, and another
 * instance refuses them, but none is ever signed with a key anyone can know. `undefined`
 * (APP_KEY unset) leaves that random key.
 */
export function setCursorKey(key: Secret | string | undefined): void {
  if (key === undefined) return
  const secret = Secret.from(key)
  if (secret.reveal().length < 32) {
    throw new TypeError('setCursorKey: the key needs 32 or more characters (APP_KEY)')
  }
  appKey = secret
  tableKeys.clear()
}

/**
 * The secret of a list query's cursors: its own `cursorSecret`, else one derived from the
 * app's key for its table, so a cursor of one table never reads as another's.
 */
export function cursorSecretOf(definition: {
  cursorSecret: Secret | undefined
  tableName: string
}): Secret {
  if (definition.cursorSecret) return definition.cursorSecret
  let secret = tableKeys.get(definition.tableName)
  if (!secret) {
    appKey ??= new Secret(randomBytes(32).toString('base64url'))
    const derived = createHmac('sha256', appKey.reveal())
      .update(`kiln-cursor:${definition.tableName}`)
      .digest('base64url')
    secret = new Secret(derived)
    tableKeys.set(definition.tableName, secret)
  }
  return secret
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
