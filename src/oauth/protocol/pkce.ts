import { createHash } from 'node:crypto'
import { constantTimeEqual } from '../../core/http/constant-time.ts'

/** An S256 challenge: base64url of a SHA-256 digest, 43 characters. @see RFC 7636 §4.2 */
export function isS256Challenge(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value)
}

/** A code verifier: 43–128 unreserved characters. @see RFC 7636 §4.1 */
export function isCodeVerifier(value: string): boolean {
  return /^[A-Za-z0-9._~-]{43,128}$/.test(value)
}

/** The S256 challenge of a verifier. @see RFC 7636 §4.2 */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

/** Checks a verifier against the stored challenge, in constant time. @see RFC 7636 §4.6 */
export function verifyCodeVerifier(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier)) return false
  return constantTimeEqual(s256Challenge(verifier), challenge)
}
