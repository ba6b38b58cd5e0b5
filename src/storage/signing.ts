import { createHmac } from 'node:crypto'
import { type Clock, systemClock } from '../core/clock.ts'
import { constantTimeEqual } from '../core/http/constant-time.ts'
import { Secret } from '../core/secret.ts'

export interface UrlSignerOptions {
  /** At least 32 characters; keep it out of source control. */
  secret: Secret | string
  clock?: Clock
}

export type SignatureCheck = 'valid' | 'expired' | 'invalid'

/**
 * Signs and checks the `expires` + `signature` query of a temporary URL: an HMAC-SHA256 over
 * the disk name, the normalized path and the expiry (Unix seconds), compared in constant time.
 */
export class UrlSigner {
  readonly #secret: Secret
  readonly clock: Clock

  constructor({ secret, clock = systemClock }: UrlSignerOptions) {
    const valid = secret instanceof Secret || typeof secret === 'string'
    if (!valid || Secret.from(secret).reveal().length < 32) {
      throw new TypeError('temporaryUrls.secret: expected a secret of at least 32 characters')
    }
    this.#secret = Secret.from(secret)
    this.clock = clock
  }

  sign(disk: string, path: string, expires: number): string {
    return createHmac('sha256', this.#secret.reveal())
      .update(`${disk}\n${path}\n${expires}`)
      .digest('base64url')
  }

  check(disk: string, path: string, expires: string, signature: string): SignatureCheck {
    if (!/^\d{1,12}$/.test(expires)) return 'invalid'
    if (!constantTimeEqual(signature, this.sign(disk, path, Number(expires)))) return 'invalid'
    return Number(expires) * 1000 <= this.clock.now() ? 'expired' : 'valid'
  }
}
