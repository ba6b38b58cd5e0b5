import { createHash, randomBytes } from 'node:crypto'

/** Injected randomness: returns `size` random bytes. Tests pass a seeded source. */
export type RandomSource = (size: number) => Uint8Array

export const systemRandom: RandomSource = (size) => randomBytes(size)

/** A URL-safe random string of `bytes` bytes of entropy (32 → 256 bits, 43 characters). */
export function randomToken(random: RandomSource, bytes = 32): string {
  return Buffer.from(random(bytes)).toString('base64url')
}

/** SHA-256 of a secret, hex: what the store keeps instead of codes and tokens themselves. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}
