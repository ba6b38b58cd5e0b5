import { errors, jwtVerify, SignJWT } from 'jose'
import { revealSecret, type Secret } from '../../core/secret.ts'
import { type AccessGrant, isAccessGrant } from './grant.ts'

/** The claims of every access token kiln mints, whichever grant produced it. */
export interface AccessTokenClaims {
  /** The user id from the session that approved the grant. */
  sub: string
  /** The tenant captured from the session at approval; absent for single-tenant apps. */
  tenant_id?: string
  client_id: string
  /** Space-separated granted scopes. */
  scope: string
  /** The protected resource (the canonical MCP URL). */
  aud: string
  iss: string
  exp: number
  iat: number
  jti: string
  /** The grant (token family) the token belongs to; revoking the grant refuses the token. */
  grant_id: string
  /** The models and actions the person granted on the consent page, when the app offers them. */
  grant?: AccessGrant
}

/** Access tokens live one hour. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600

const encoder = new TextEncoder()

/** The HMAC key for a secret; computed once per issuer or validator. */
export function hmacKey(secret: Secret | string): Uint8Array {
  return encoder.encode(revealSecret(secret))
}

/**
 * The WebCrypto key of an HMAC secret, imported once per key. Given raw bytes, jose imports
 * them into a `CryptoKey` on every sign and verify: that import was the largest single cost
 * of a bearer check (docs/performance-archive.md, the MCP notes). The bytes of a key are never changed after
 * `hmacKey` makes them, so the import is kept beside them for as long as they live.
 */
const imported = new WeakMap<Uint8Array, Promise<CryptoKey>>()

function cryptoKeyOf(key: Uint8Array): Promise<CryptoKey> {
  let cryptoKey = imported.get(key)
  if (!cryptoKey) {
    cryptoKey = crypto.subtle.importKey(
      'raw',
      key as Uint8Array<ArrayBuffer>,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
    imported.set(key, cryptoKey)
  }
  return cryptoKey
}

/**
 * Signs an access token: HS256, `typ: at+jwt`. @see RFC 9068 §2
 */
export async function signAccessToken(claims: AccessTokenClaims, key: Uint8Array): Promise<string> {
  const { iss, aud, sub, exp, iat, jti, ...rest } = claims
  const payload: Record<string, unknown> = {
    client_id: rest.client_id,
    scope: rest.scope,
    grant_id: rest.grant_id,
  }
  if (rest.tenant_id !== undefined) payload.tenant_id = rest.tenant_id
  if (rest.grant !== undefined) payload.grant = rest.grant
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(iss)
    .setAudience(aud)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(await cryptoKeyOf(key))
}

export type VerifyResult = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: string }

/**
 * Verifies an access token: the signature with `alg` pinned to HS256, `typ`, `exp`, `iss`,
 * and that `aud` is this resource. Never throws; the reason says what was wrong without
 * echoing the token. @see RFC 9068 §4, RFC 8725 §3.1
 */
export async function verifyAccessToken(
  token: string,
  key: Uint8Array,
  expected: { issuer: string; audience: string; now: number },
): Promise<VerifyResult> {
  try {
    const { payload } = await jwtVerify(token, await cryptoKeyOf(key), {
      algorithms: ['HS256'],
      typ: 'at+jwt',
      issuer: expected.issuer,
      audience: expected.audience,
      currentDate: new Date(expected.now),
      clockTolerance: 0,
      requiredClaims: ['sub', 'client_id', 'scope', 'exp', 'iat', 'jti', 'grant_id'],
    })
    const { sub, client_id, scope, exp, iat, jti, tenant_id, grant_id, grant } = payload
    if (
      typeof sub !== 'string' ||
      typeof client_id !== 'string' ||
      typeof scope !== 'string' ||
      typeof jti !== 'string' ||
      typeof grant_id !== 'string' ||
      typeof exp !== 'number' ||
      typeof iat !== 'number' ||
      (tenant_id !== undefined && typeof tenant_id !== 'string') ||
      (grant !== undefined && !isAccessGrant(grant))
    ) {
      return { ok: false, reason: 'The token has malformed claims' }
    }
    const claims: AccessTokenClaims = {
      sub,
      client_id,
      scope,
      aud: expected.audience,
      iss: expected.issuer,
      exp,
      iat,
      jti,
      grant_id,
    }
    if (tenant_id !== undefined) claims.tenant_id = tenant_id
    if (grant !== undefined) claims.grant = grant
    return { ok: true, claims }
  } catch (error) {
    return { ok: false, reason: reasonFor(error) }
  }
}

function reasonFor(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired'
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The token algorithm is not allowed'
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'The token signature is invalid'
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'iss':
        return 'The token was issued by another issuer'
      case 'aud':
        return 'The token is for another resource'
      case 'typ':
        return 'The token is not an access token'
      case 'nbf':
      case 'iat':
        return 'The token is not valid yet'
      default:
        return `The token is missing or has an invalid ${error.claim} claim`
    }
  }
  return 'The token is malformed'
}
