import { randomBytes, scrypt } from 'node:crypto'
import { constantTimeEqual } from '../core/http/constant-time.ts'

/** Options of `createPasswordHasher`. */
export interface PasswordHasherOptions {
  /** scrypt cost N (a power of two). Default 16384. */
  cost?: number
  /** scrypt block size r. Default 8. */
  blockSize?: number
  /** scrypt parallelization p. Default 1. */
  parallelization?: number
}

/** Hashes and verifies passwords, from `createPasswordHasher`. */
export interface PasswordHasher {
  /** `scrypt$N$r$p$<salt>$<hash>` with this hasher's parameters. */
  hash(password: string): Promise<string>
  /**
   * Whether `password` matches `stored`. Without a stored hash (unknown user) a dummy hash is
   * checked instead, so an unknown email takes as long as a wrong password. A stored hash
   * with other parameters than the app's never matches: the parameters are the app's, never
   * read from the (possibly attacker-written) hash.
   */
  verify(password: string, stored: string | null | undefined): Promise<boolean>
}

const KEY_LENGTH = 32

/**
 * scrypt password hashing with parameters fixed by the app.
 * @example
 * ```ts
 * const passwords = createPasswordHasher()
 * const hash = await passwords.hash('correct horse')
 * ```
 */
export function createPasswordHasher(options: PasswordHasherOptions = {}): PasswordHasher {
  const N = options.cost ?? 16384
  const r = options.blockSize ?? 8
  const p = options.parallelization ?? 1
  if (!Number.isInteger(Math.log2(N)) || N < 2 || !Number.isInteger(r) || !Number.isInteger(p)) {
    throw new TypeError(
      'createPasswordHasher: cost must be a power of two; blockSize and parallelization whole numbers',
    )
  }
  const maxmem = 256 * N * r + 1024 * 1024
  const derive = (password: string, salt: Buffer) =>
    new Promise<Buffer>((resolve, reject) =>
      scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r, p, maxmem }, (error, key) =>
        error ? reject(error) : resolve(key),
      ),
    )
  const prefix = `scrypt$${N}$${r}$${p}$`
  const dummySalt = randomBytes(16)

  return {
    async hash(password) {
      const salt = randomBytes(16)
      const key = await derive(password, salt)
      return `${prefix}${salt.toString('base64url')}$${key.toString('base64url')}`
    },
    async verify(password, stored) {
      const parts =
        typeof stored === 'string' && stored.startsWith(prefix)
          ? stored.slice(prefix.length).split('$')
          : []
      const [salt, hash] = parts.length === 2 ? parts : []
      if (!salt || !hash) {
        await derive(password, dummySalt)
        return false
      }
      const key = await derive(password, Buffer.from(salt, 'base64url'))
      return constantTimeEqual(key, Buffer.from(hash, 'base64url'))
    },
  }
}
