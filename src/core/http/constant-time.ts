import { hash, timingSafeEqual } from 'node:crypto'

/**
 * Compares two secrets (tokens, signatures, digests) in constant time. Both sides are hashed
 * with SHA-256 first, so inputs of different lengths take the same time too and the length
 * of the expected value leaks nothing. Empty strings never match.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  if (a.length === 0 || b.length === 0) return false
  return timingSafeEqual(sha256(a), sha256(b))
}

/**
 * Compares two digests whose length is public (an HMAC-SHA256 is 32 bytes whatever the key):
 * in constant time, without hashing them again. Different lengths never match.
 */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.byteLength > 0 && timingSafeEqual(a, b)
}

function sha256(value: string | Uint8Array): Buffer {
  return Buffer.from(hash('sha256', value, 'buffer'))
}
