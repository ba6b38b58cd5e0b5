import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Compares two secrets (tokens, signatures, digests) in constant time. Both sides are hashed
 * with SHA-256 first, so inputs of different lengths take the same time too and the length
 * of the expected value leaks nothing. Empty strings never match.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  if (a.length === 0 || b.length === 0) return false
  const left = createHash('sha256').update(a).digest()
  const right = createHash('sha256').update(b).digest()
  return timingSafeEqual(left, right)
}
