import { createHash, randomBytes as cryptoRandomBytes } from 'node:crypto'
import { constantTimeEqual } from '../../core/http/constant-time.ts'
import { ApiKeyRejectedError } from '../errors.ts'

/** `live` keys are for production, `test` keys for everything else. */
export type ApiKeyEnv = 'live' | 'test'

/** The two-character service prefix every kiln key starts with. */
export const API_KEY_SERVICE_PREFIX = 'kl'
/** Characters of the random part: base62. */
export const API_KEY_SECRET_LENGTH = 43
/** `kl_live_` + 43 characters. */
export const API_KEY_LENGTH = 51
/** The first 16 characters, stored unhashed and used to find the record. */
export const API_KEY_PREFIX_LENGTH = 16

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** The largest multiple of 62 below 256: bytes at or above it are discarded (no modulo bias). */
const UNBIASED_LIMIT = 248
const API_KEY_PATTERN = /^kl_(live|test)_[0-9A-Za-z]{43}$/

/** A new API key, from `generateApiKey`. */
export interface GeneratedApiKey {
  /** The key itself: shown to its owner once, never stored. */
  rawKey: string
  /** The first 16 characters of the key. */
  prefix: string
  /** SHA-256 of the key, lowercase hex (64 characters): what the database stores. */
  hashedKey: string
}

/** What `parseApiKey` reads from a key's shape: its environment and prefix. */
export interface ParsedApiKey {
  env: ApiKeyEnv
  prefix: string
}

/** Options of `generateApiKey`. */
export interface GenerateApiKeyOptions {
  /** Source of random bytes; `crypto.randomBytes` unless a test injects one. */
  randomBytes?: (size: number) => Uint8Array
}

/**
 * Mints a key `kl_<env>_<43 base62 characters>` from a CSPRNG. Each character comes from
 * one random byte below 248 (4 × 62), so every character of the alphabet is equally likely.
 */
export function generateApiKey(
  env: ApiKeyEnv = 'live',
  options: GenerateApiKeyOptions = {},
): GeneratedApiKey {
  if (env !== 'live' && env !== 'test') {
    throw new TypeError(`generateApiKey: env must be "live" or "test", got ${String(env)}`)
  }
  const random = options.randomBytes ?? cryptoRandomBytes
  let secret = ''
  while (secret.length < API_KEY_SECRET_LENGTH) {
    const bytes = random(64)
    for (const byte of bytes) {
      if (byte >= UNBIASED_LIMIT) continue
      secret += BASE62[byte % 62]
      if (secret.length === API_KEY_SECRET_LENGTH) break
    }
  }
  const rawKey = `${API_KEY_SERVICE_PREFIX}_${env}_${secret}`
  return {
    rawKey,
    prefix: rawKey.slice(0, API_KEY_PREFIX_LENGTH),
    hashedKey: hashApiKey(rawKey),
  }
}

/**
 * Checks the shape of a presented key before any database work: exactly 51 characters,
 * `kl_live_` or `kl_test_`, then 43 base62 characters. Throws `ApiKeyRejectedError`
 * (a 401) with reason `malformed` otherwise.
 */
export function parseApiKey(raw: string): ParsedApiKey {
  if (typeof raw !== 'string' || raw.length !== API_KEY_LENGTH || !API_KEY_PATTERN.test(raw)) {
    throw new ApiKeyRejectedError('malformed')
  }
  return {
    env: raw.startsWith('kl_live_') ? 'live' : 'test',
    prefix: raw.slice(0, API_KEY_PREFIX_LENGTH),
  }
}

/** True when `raw` has the shape of a kiln key. */
export function isApiKeyShaped(raw: string): boolean {
  return typeof raw === 'string' && raw.length === API_KEY_LENGTH && API_KEY_PATTERN.test(raw)
}

/** SHA-256 of the key as 64 lowercase hex characters: the value of `hashed_key`. */
export function hashApiKey(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex')
}

/** SHA-256 of the key as raw bytes, for constant-time comparison. */
export function digestApiKey(raw: string): Buffer {
  return createHash('sha256').update(raw, 'utf8').digest()
}

/** Constant-time check that a stored `hashed_key` (hex) is the digest of the presented key. */
export function digestMatches(storedHex: string, digest: Uint8Array): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(storedHex) || digest.length !== 32) return false
  return constantTimeEqual(Buffer.from(storedHex, 'hex'), digest)
}
