import type { Context, MiddlewareHandler } from 'hono'
import { type Clock, systemClock } from '../core/clock.ts'
import { setRequestActor } from '../core/http/request-log.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import { Secret } from '../core/secret.ts'
import { OAuthError } from './errors.ts'
import {
  bearerChallenge,
  bearerErrorResponse,
  missingTokenResponse,
} from './http/error-response.ts'
import { type AccessTokenClaims, hmacKey, verifyAccessToken } from './protocol/access-token.ts'
import {
  type CredentialStamp,
  currentStampDigest,
  stampStillValid,
} from './protocol/credential-stamp.ts'
import { parseScope } from './protocol/scope.ts'
import { readGrant } from './store/grants.ts'
import { isFamilyRevoked } from './store/token-families.ts'

/** What a bearer check found: valid claims, no token, or an invalid one. */
export type BearerResult =
  | { kind: 'valid'; claims: AccessTokenClaims }
  | { kind: 'missing' }
  | { kind: 'invalid'; reason: string }

/** Options of `createBearerValidator`. */
export interface BearerValidatorOptions {
  /** The `MCP_TOKEN_SECRET` the authorization server signs with. */
  secret: Secret | string
  /** The issuer, byte for byte as in the authorization server's metadata. */
  issuer: string
  /** This resource's canonical URL; tokens whose `aud` differs are invalid. */
  resource: string
  clock?: Clock
  /**
   * The authorization server's KeyValueStore. With it, tokens of a revoked grant (a replayed
   * code, a reused refresh token, RFC 7009 revocation, a disconnected app, a deleted user) are
   * refused at once: one read of the grant's revocation mark per request. Without it they stay
   * valid until they expire (at most one hour).
   */
  store?: KeyValueStore
  /**
   * The same `credentialStamp` as the authorization server's (needs `store`). Tokens of a user
   * who was deleted or changed their password are refused, however the change was made (API,
   * admin, SQL): one more store read and one call (a primary-key query) per request.
   */
  credentialStamp?: CredentialStamp
}

/** Checks a request's bearer token, from `createBearerValidator`. */
export type ValidateBearer = (request: Request) => Promise<BearerResult>

/**
 * Reads `Authorization: Bearer <token>` (never the query string or the body) and verifies the
 * access token. @see RFC 6750 §2.1, RFC 9068 §4
 * @example
 * ```ts
 * const validator = createBearerValidator({
 *   secret: oauthConfig.secret,
 *   issuer: oauthConfig.issuer,
 *   resource: `${oauthConfig.issuer}/mcp`,
 * })
 * ```
 */
export function createBearerValidator(options: BearerValidatorOptions): ValidateBearer {
  const { issuer, resource, clock = systemClock, store, credentialStamp } = options
  const secret = options.secret === undefined ? undefined : Secret.from(options.secret)
  if (!secret || secret.reveal().length === 0) {
    throw new TypeError('createBearerValidator: `secret` is required (MCP_TOKEN_SECRET)')
  }
  if (!issuer || !resource) {
    throw new TypeError('createBearerValidator: `issuer` and `resource` are required')
  }
  if (credentialStamp && !store) {
    throw new TypeError('createBearerValidator: `credentialStamp` needs the `store` of the grants')
  }
  const key = hmacKey(secret)
  const verified = new VerifiedTokens()
  return async function validateBearer(request: Request): Promise<BearerResult> {
    const header = request.headers.get('authorization')
    if (header === null) return { kind: 'missing' }
    const match = /^Bearer(?: +(.*))?$/i.exec(header.trim())
    if (!match) return { kind: 'missing' }
    const token = match[1]?.trim()
    if (!token) return { kind: 'invalid', reason: 'The bearer token is empty' }
    if (/\s/.test(token)) return { kind: 'invalid', reason: 'The token is malformed' }
    const now = clock.now()
    let claims = verified.get(token, now)
    if (!claims) {
      const result = await verifyAccessToken(token, key, { issuer, audience: resource, now })
      if (!result.ok) return { kind: 'invalid', reason: result.reason }
      claims = result.claims
      verified.add(token, claims)
    }
    // Revocation is checked on every request, cached signature or not.
    if (store && (await isFamilyRevoked(store, claims.grant_id))) {
      return { kind: 'invalid', reason: 'The token has been revoked' }
    }
    if (credentialStamp && store && !(await stampHolds(store, credentialStamp, claims))) {
      return { kind: 'invalid', reason: 'The token has been revoked' }
    }
    return { kind: 'valid', claims: { ...claims } }
  }
}

/**
 * The claims of tokens this validator has verified, until they expire: a client sends the same
 * token with every call for up to an hour, and checking its HMAC signature (an asynchronous
 * WebCrypto job) was the largest cost of a bearer check. The signature, `typ`, `iss` and `aud`
 * of a token never change, so only `exp` is checked again. At most `MAX` tokens are kept; the
 * oldest is dropped first. A token is the key as it came: it never leaves this map.
 */
class VerifiedTokens {
  static readonly MAX = 10_000
  readonly #claims = new Map<string, AccessTokenClaims>()

  get(token: string, now: number): AccessTokenClaims | undefined {
    const claims = this.#claims.get(token)
    if (claims && claims.exp * 1000 <= now) {
      this.#claims.delete(token)
      return undefined
    }
    return claims
  }

  add(token: string, claims: AccessTokenClaims): void {
    if (this.#claims.size >= VerifiedTokens.MAX) {
      const oldest = this.#claims.keys().next().value
      if (oldest !== undefined) this.#claims.delete(oldest)
    }
    this.#claims.set(token, claims)
  }
}

/** The token's grant still exists and its user's credentials are the ones it was approved with. */
async function stampHolds(
  store: KeyValueStore,
  credentialStamp: CredentialStamp,
  claims: AccessTokenClaims,
): Promise<boolean> {
  const [grant, current] = await Promise.all([
    readGrant(store, claims.grant_id),
    currentStampDigest(credentialStamp, claims.sub),
  ])
  return grant !== undefined && stampStillValid(current, grant.credentialStamp)
}

/** Options of `bearerAuth`. */
export interface BearerAuthOptions {
  validator: ValidateBearer
  /** The URL of this resource's protected-resource metadata, sent in every challenge. */
  resourceMetadataUrl: string
  /** Scopes every request must carry; checked after the token is known valid. */
  scopes?: string[]
  /**
   * The `scope` of the 401 challenges: what a client should ask for to use this resource
   * (MCP 2025-11-25 clients request exactly these). Not required of a token. Default `scopes`.
   */
  challengeScopes?: string[]
}

/** The Hono env of routes behind `bearerAuth`: the verified token's claims. */
export type BearerEnv = { Variables: { accessToken: AccessTokenClaims } }

/**
 * Protects resource routes: 401 with `WWW-Authenticate: Bearer resource_metadata="…"` when the
 * token is missing (no `error`) or invalid (`error="invalid_token"`), both with `scope` when
 * there are challenge scopes, then 403 `insufficient_scope` when a required scope is absent.
 * @see RFC 6750 §3, RFC 9728 §5.1
 * @example
 * ```ts
 * app.use(
 *   '/mcp',
 *   bearerAuth({
 *     validator,
 *     resourceMetadataUrl: `${oauthConfig.issuer}/.well-known/oauth-protected-resource/mcp`,
 *   }),
 * )
 * ```
 */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<BearerEnv> {
  const { validator, resourceMetadataUrl, scopes = [] } = options
  if (typeof validator !== 'function') {
    throw new TypeError('bearerAuth: `validator` is required (createBearerValidator)')
  }
  if (!resourceMetadataUrl) throw new TypeError('bearerAuth: `resourceMetadataUrl` is required')
  const required = scopes.join(' ')
  const challenged = (options.challengeScopes ?? scopes).join(' ') || undefined
  return async function bearerAuthMiddleware(c, next) {
    const result = await validator(c.req.raw)
    if (result.kind === 'missing') return missingTokenResponse(resourceMetadataUrl, challenged)
    if (result.kind === 'invalid') {
      return bearerErrorResponse(
        new OAuthError('invalid_token', result.reason),
        resourceMetadataUrl,
        challenged,
      )
    }
    const granted = new Set(parseScope(result.claims.scope))
    if (!scopes.every((scope) => granted.has(scope))) {
      return bearerErrorResponse(
        new OAuthError('insufficient_scope', `This resource needs the scope: ${required}`, {
          scope: required,
        }),
        resourceMetadataUrl,
      )
    }
    c.set('accessToken', result.claims)
    setRequestActor(c, `client ${result.claims.client_id}`)
    await next()
  }
}

/** The verified claims stored by `bearerAuth`. Throws when the route is not behind it. */
export function getAccessToken(c: Context): AccessTokenClaims {
  const claims = c.get('accessToken') as AccessTokenClaims | undefined
  if (!claims) throw new TypeError('getAccessToken: this route is not behind bearerAuth()')
  return claims
}

/**
 * The `WWW-Authenticate` value for a request whose token lacks a scope the operation needs
 * (answer it with 403): `Bearer error="insufficient_scope", scope="…", resource_metadata="…"`.
 * A client can then ask the person for the wider scope (step-up). @see RFC 6750 §3.1
 */
export function insufficientScopeChallenge(options: {
  resourceMetadataUrl: string
  /** The scopes the operation needs, e.g. `['mcp:write']`. */
  scopes: string[]
  description?: string
}): string {
  const scope = options.scopes.join(' ')
  return bearerChallenge({
    resourceMetadataUrl: options.resourceMetadataUrl,
    error: new OAuthError(
      'insufficient_scope',
      options.description ?? `This operation needs the scope: ${scope}`,
      { scope },
    ),
  })
}
