import { createHmac } from 'node:crypto'
import { digestsEqual } from '../core/http/constant-time.ts'
import { revealSecret, type Secret } from '../core/secret.ts'

/** The header the provider signs webhook bodies in: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-hub-signature-256'

const SIGNATURE_FORMAT = /^sha256=([0-9a-fA-F]{64})$/

/** The header value for `body` signed with `appSecret` (tests, benchmarks, local replays). */
export function signWebhookBody(appSecret: Secret | string, body: Uint8Array | string): string {
  return `sha256=${createHmac('sha256', revealSecret(appSecret)).update(body).digest('hex')}`
}

/**
 * Checks `x-hub-signature-256` over the exact bytes received, before anything parses them
 * (a parsed-and-re-serialized body has other bytes). Compares the 32-byte digests in
 * constant time; a missing or malformed header is simply invalid.
 */
export function verifyWebhookSignature(
  appSecret: Secret | string,
  body: Uint8Array,
  header: string | null | undefined,
): boolean {
  const match = header ? SIGNATURE_FORMAT.exec(header.trim()) : null
  if (!match?.[1]) return false
  const expected = createHmac('sha256', revealSecret(appSecret)).update(body).digest()
  return digestsEqual(Buffer.from(match[1], 'hex'), expected)
}
