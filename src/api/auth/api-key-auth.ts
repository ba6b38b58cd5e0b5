import type { Context, Env, MiddlewareHandler } from 'hono'
import { ForbiddenError, UnauthenticatedError } from '../../core/errors.ts'
import { setRequestActor } from '../../core/http/request-log.ts'
import type { Logger } from '../../core/logger.ts'
import { ApiKeyRejectedError } from '../errors.ts'
import type { ApiKeyInfo, ApiKeyProvider } from '../provider/api-key-provider.ts'
import { isValidScope, missingScopes } from '../provider/scopes.ts'

/** The Hono `Env` of routes behind `apiKeyAuth`: `c.get('apiKey')` is the verified key. */
export type ApiEnv = { Variables: { apiKey: ApiKeyInfo } }

/** Options of `apiKeyAuth`. */
export interface ApiKeyAuthOptions {
  provider: ApiKeyProvider
  /** Scopes every request must carry; none means any valid key. `*` on a key grants all. */
  scopes?: string[]
  /** Where refusals are logged with their reason (the response never says why). */
  logger?: Logger
}

/**
 * Authenticates `Authorization: Bearer <key>` with the provider, checks the required scopes,
 * and stores the key's `ApiKeyInfo` for `getApiKey(c)`. A refused key is a 401
 * `{ "error": "Unauthenticated" }` with `WWW-Authenticate: Bearer` whatever the reason; a
 * missing scope is a 403; a failing key store a 500. The app's `errorHandler` renders them.
 * @example
 * ```ts
 * app.use('/api/admin/*', apiKeyAuth({ provider: apiKeys, scopes: ['admin'], logger }))
 * ```
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): MiddlewareHandler<ApiEnv> {
  const check = keyCheck(options, 'apiKeyAuth')
  return async function apiKeyAuthMiddleware(c, next) {
    c.set('apiKey', await authenticate(c, check))
    await next()
  }
}

/** `ApiKeyAuthOptions`, checked at start-up. */
export interface KeyCheck {
  provider: ApiKeyProvider
  required: string[]
  logger: Logger | undefined
}

/** Checks the options of `apiKeyAuth` (or of middleware doing what it does) at start-up. */
export function keyCheck(options: ApiKeyAuthOptions, owner: string): KeyCheck {
  const { provider, logger } = options
  if (!provider || typeof provider.verifyKey !== 'function') {
    throw new TypeError(`${owner}: \`provider\` must implement verifyKey(rawKey)`)
  }
  const required = [...(options.scopes ?? [])]
  const bad = required.find((scope) => !isValidScope(scope))
  if (bad !== undefined) throw new TypeError(`${owner}: invalid scope ${JSON.stringify(bad)}`)
  return { provider, required, logger }
}

/**
 * What `apiKeyAuth` does before the handler: the request's verified key with the required
 * scopes, or the error to answer with (401, 403, 500), its reason logged.
 */
export async function authenticate(c: Context, check: KeyCheck): Promise<ApiKeyInfo> {
  const { provider, required, logger } = check
  let info: ApiKeyInfo
  try {
    info = await provider.verifyKey(bearerCredential(c.req.header('Authorization')))
  } catch (error) {
    if (error instanceof UnauthenticatedError) {
      const reason = error instanceof ApiKeyRejectedError ? error.reason : 'refused'
      const keyId = error instanceof ApiKeyRejectedError ? error.keyId : undefined
      logger?.info({ reason, keyId, method: c.req.method, path: c.req.path }, 'API key refused')
    }
    throw error
  }
  const missing = required.length === 0 ? required : missingScopes(info.scopes, required)
  if (missing.length > 0) {
    logger?.info({ keyId: info.id, missing, path: c.req.path }, 'API key lacks a scope')
    throw new ForbiddenError(missingScopeMessage(missing))
  }
  setRequestActor(c, `key ${info.name}`)
  return info
}

/**
 * The key in `Authorization: Bearer <key>`. The scheme is case-insensitive (RFC 9110 §11.1);
 * a missing header, another scheme, or an empty or spaced credential is refused before the
 * provider sees anything.
 */
export function bearerCredential(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new ApiKeyRejectedError('missing')
  const match = /^Bearer +(\S+) *$/i.exec(header)
  if (!match?.[1]) throw new ApiKeyRejectedError('malformed')
  return match[1]
}

/**
 * The verified key of this request. Throws `UnauthenticatedError` (401) when the route is
 * not behind `apiKeyAuth`, so a handler can never run with a missing key unnoticed.
 */
export function getApiKey<E extends Env>(c: Context<E>): ApiKeyInfo {
  const info = (c as unknown as Context<ApiEnv>).get('apiKey')
  if (!info || typeof info.id !== 'number' || !Array.isArray(info.scopes)) {
    throw new UnauthenticatedError()
  }
  return info
}

/**
 * Finer checks inside a handler: throws `ForbiddenError` (403 `{ "error": … }`) unless the
 * request's key has every scope (`*` has all), and 401 when there is no key at all.
 */
export function requireScopes<E extends Env>(c: Context<E>, ...scopes: string[]): ApiKeyInfo {
  const info = getApiKey(c)
  const missing = missingScopes(info.scopes, scopes)
  if (missing.length > 0) throw new ForbiddenError(missingScopeMessage(missing))
  return info
}

/** The 403 message of a key that lacks `missing`: the same wherever a scope is checked. */
export function missingScopeMessage(missing: readonly string[]): string {
  return missing.length === 1
    ? `This API key lacks the scope ${missing[0]}`
    : `This API key lacks the scopes ${missing.join(', ')}`
}
