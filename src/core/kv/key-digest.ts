import { createHash } from 'node:crypto'

/**
 * The part of a store key that stands for a secret or personal value (a session id, an
 * email, a client address): its SHA-256, base64url. Whoever lists the keys (`SCAN`, a
 * monitoring tool, a memory dump) reads neither; the value is found again by hashing it.
 * The one such helper: session and rate-limit keys both go through it.
 */
export function keyDigest(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}
