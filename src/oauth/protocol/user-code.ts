import type { RandomSource } from './random.ts'

/** Consonants only: no vowels (no words), no look-alikes. @see RFC 8628 §6.1 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
export const USER_CODE_LENGTH = 8

/** A new user code, 8 letters without bias (rejection sampling), unformatted. */
export function generateUserCode(random: RandomSource): string {
  const size = USER_CODE_ALPHABET.length
  const limit = 256 - (256 % size)
  let code = ''
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of random(USER_CODE_LENGTH * 2)) {
      if (byte < limit && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % size]
    }
  }
  return code
}

/** `BCDFGHJK` → `BCDF-GHJK`, as shown to the user. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/**
 * What the user typed, normalized: case-insensitive, with or without the hyphen, spaces
 * ignored. Undefined when it cannot be a user code.
 */
export function normalizeUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== USER_CODE_LENGTH) return undefined
  for (const char of code) if (!USER_CODE_ALPHABET.includes(char)) return undefined
  return code
}
