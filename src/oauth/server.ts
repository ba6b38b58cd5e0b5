import { Hono } from 'hono'
import { type Clock, systemClock } from '../core/clock.ts'
import { bodyLimit } from '../core/http/body-limit.ts'
import type { TrustProxy } from '../core/http/client-ip.ts'
import { type OriginGuardOptions, originGuard } from '../core/http/origin-guard.ts'
import {
  createRateLimiters,
  type RateLimiters,
  type WindowLimitOption,
  windowLimit,
} from '../core/http/rate-limiters.ts'
import { noSniff } from '../core/http/security-headers.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import { type Logger, silentLogger } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'
import type { AuditReader } from '../db/audit/audit-log.ts'
import type { Database } from '../db/database.ts'
import {
  type ClientMetadataDocumentOptions,
  ClientMetadataDocuments,
  DOCUMENT_FETCH_LIMIT,
} from './cimd/metadata-documents.ts'
import { normalizeIssuer } from './config.ts'
import type { OAuthContext, SessionResolver } from './context.ts'
import { oauthCors } from './cors.ts'
import { authorizeDecisionHandler, authorizeHandler } from './handlers/authorize.ts'
import { connectedAppsHandler, disconnectAppHandler } from './handlers/connected-apps.ts'
import { deviceDecisionHandler, deviceHandler } from './handlers/device.ts'
import { deviceAuthorizationHandler } from './handlers/device-authorization.ts'
import { metadataHandler } from './handlers/metadata.ts'
import { protectedResourceHandler } from './handlers/protected-resource.ts'
import { registerHandler } from './handlers/register.ts'
import { revokeHandler } from './handlers/revoke.ts'
import { tokenHandler } from './handlers/token.ts'
import { oauthErrorHandler } from './http/error-response.ts'
import { TokenIssuer } from './issuer.ts'
import { hmacKey } from './protocol/access-token.ts'
import { type CredentialStamp, currentStampDigest } from './protocol/credential-stamp.ts'
import type { GrantableAccess } from './protocol/grant.ts'
import { endpointsFor } from './protocol/metadata.ts'
import { type RandomSource, systemRandom } from './protocol/random.ts'
import { DEFAULT_SCOPE_DESCRIPTIONS, DEFAULT_SCOPES } from './protocol/scope.ts'
import { AuthorizationCodeStore } from './store/authorization-codes.ts'
import { maxUnusedClients, UNUSED_CLIENT_TTL_MS } from './store/client-expiry.ts'
import { type ClientStore, createDatabaseClientStore } from './store/client-store.ts'
import { DeviceGrantStore } from './store/device-grants.ts'
import { GrantIndex } from './store/grants.ts'
import { TokenFamilies } from './store/token-families.ts'

/** Options of `oauthServer`. */
export interface OAuthServerOptions {
  /** Where registered clients live (the `oauth_clients` table). Or pass `clients`. */
  database?: Database
  /** A client store of your own instead of `database`. */
  clients?: ClientStore
  /** Codes, device grants, refresh-token families and throttles. Redis for many instances. */
  store: KeyValueStore
  /** `MCP_TOKEN_SECRET`: signs access tokens (HS256). At least 32 characters. */
  secret: Secret | string
  /** `APP_URL`: the origin the app is served at; the issuer and the base of every endpoint. */
  issuer: string
  /** Path of the protected MCP endpoint. Default `/mcp`. */
  resourcePath?: string
  /** The application's login page; receives `?return_to=<relative path>`. Default `/login`. */
  loginPath?: string
  /** Resolves the signed-in user, tenant and CSRF token of a browser request. */
  session: SessionResolver
  /** Scopes this server grants. Default `['mcp:read', 'mcp:write']`. */
  scopes?: string[]
  /** Plain words for scopes on the consent and connected-apps pages (merged over kiln's). */
  scopeDescriptions?: Record<string, string>
  /** Shown on the consent page ("… wants to access your <appName> account"). */
  appName?: string
  clock?: Clock
  random?: RandomSource
  logger?: Logger
  /**
   * kiln's rate limiters (`createRateLimiters({ redis: shared.client, trustProxy })`), shared
   * with the API so every instance counts together. Without them the throttles count in this
   * process's memory. The OAuth limiters are `oauth-register`,
   * `oauth-device-authorization`, `oauth-device-code-unknown`, `oauth-cimd-fetch`,
   * `oauth-user-code-ip` and `oauth-user-code-user`; define one of those names yourself to
   * change it.
   */
  rateLimiters?: RateLimiters
  /** Which proxies' `X-Forwarded-For` the throttles believe, without `rateLimiters`. */
  trustProxy?: TrustProxy
  /** Client registrations per IP. Default 20 per hour. */
  registrationLimit?: WindowLimitOption
  /**
   * Registered (DCR) clients that never got a token, kept at most. A registration past it
   * removes the oldest of them first: what registration stores is bounded, what is asked is
   * not, so a flood of valid registrations cannot refuse the next client. Default 10,000.
   */
  maxUnusedClients?: number
  /**
   * Registration only for clients that hold one of these (`Authorization: Bearer …`, compared
   * in constant time); without it /register is open. @see RFC 7591 §3
   */
  initialAccessToken?: Secret | string | Array<Secret | string>
  /**
   * Device authorizations per IP, and polls with an unknown device code per IP.
   * Defaults 30 and 60 per 15 minutes.
   */
  deviceLimits?: { authorizationPerIp?: WindowLimitOption; unknownCodePerIp?: WindowLimitOption }
  /** Wrong device codes per signed-in user and per IP. Defaults 10 and 30 per 15 minutes. */
  userCodeLimits?: { perSession?: WindowLimitOption; perIp?: WindowLimitOption }
  /**
   * The browser pages (/authorize, /device, /connected-apps) refuse, with 403, a form post
   * whose `Origin` and any request whose `Host` is not APP_URL's. Add more here (kiln/core
   * `originGuard`); `hosts: false` when a proxy rewrites `Host`. The endpoints clients call
   * (token, register, revoke, device authorization, discovery) stay open to any origin.
   */
  allowedOrigins?: Omit<OriginGuardOptions, 'appUrl'>
  /**
   * Clients identified by the HTTPS URL of their metadata document (CIMD): on by default.
   * `allowLoopback` (development and tests only) accepts http loopback document URLs;
   * `fetchLimit` bounds the fetches one address causes (limiter `oauth-cimd-fetch`).
   */
  clientIdMetadataDocuments?: ClientMetadataDocumentOptions
  /**
   * The user's credential stamp (the session store's `credentialStamp`: e.g. the password
   * hash; undefined for a deleted user). Recorded with each approval; a code, device grant or
   * refresh token whose user is gone or whose stamp changed is refused with `invalid_grant`
   * and its grant ends, however the change was made (API, admin, SQL). One call per token
   * request. Give the same function to `createBearerValidator` for access tokens.
   */
  credentialStamp?: CredentialStamp
  /**
   * Registered (DCR) clients that never got a token are removed this long after registering
   * (swept, a bounded batch at a time, on each registration). Default 30 days; `false` keeps
   * them forever.
   */
  unusedClientTtlMs?: number | false
  /**
   * What the app lets assistants do (kilnjs/mcp `dataTools.describeAccess`): the consent page
   * lists it per model (read, create, update, delete) for the requested scopes, the person can
   * untick any of it, and the grant rides in every token of the authorization (the `grant`
   * claim). A scope no offered action needs is neither asked for nor granted. Without it the
   * page lists the scopes alone.
   */
  describeAccess?: () => GrantableAccess
  /**
   * The data tools' audit trail (kilnjs/db `createAuditLog(database)`): `/connected-apps` then
   * shows what each application did for the person, newest first, a page at a time.
   */
  activity?: AuditReader
}

const MIN_SECRET = 32

/**
 * The OAuth 2.1 authorization server for an MCP endpoint, as Hono routes to mount at the
 * root of the app: discovery (RFC 8414, RFC 9728), registration (RFC 7591), authorization
 * code + PKCE with consent, the device grant (RFC 8628) and the token endpoint.
 * @example
 * ```ts
 * app.route('/', oauthServer({
 *   database,
 *   store: shared.kv,
 *   secret: oauthConfig.secret,
 *   issuer: oauthConfig.issuer,
 *   session: (request) => sessions.current(request),
 * }))
 * ```
 */
export function oauthServer(options: OAuthServerOptions): Hono {
  const ctx = buildContext(options)
  const app = new Hono()
  app.onError(oauthErrorHandler({ issuer: ctx.endpoints.issuer, logger: ctx.logger }))
  const limit = bodyLimit({ maxBytes: 64 * 1024 })
  // The endpoints clients call answer JSON to any origin; the pages have their own headers.
  const clientFacing = [oauthCors(), noSniff()] as const
  const resourcePath = new URL(ctx.endpoints.resource).pathname
  const sameSite = originGuard({ ...options.allowedOrigins, appUrl: ctx.endpoints.issuer })
  for (const page of ['/authorize', '/device', '/connected-apps']) app.use(page, sameSite)

  app.use('/.well-known/oauth-authorization-server', ...clientFacing)
  app.get('/.well-known/oauth-authorization-server', metadataHandler(ctx))
  for (const path of [
    '/.well-known/oauth-protected-resource',
    `/.well-known/oauth-protected-resource${resourcePath}`,
  ]) {
    app.use(path, ...clientFacing)
    app.get(path, protectedResourceHandler(ctx))
  }
  app.use('/register', ...clientFacing, limit)
  app.post('/register', registerHandler(ctx))
  app.use('/token', ...clientFacing, limit)
  app.post('/token', tokenHandler(ctx))
  app.use('/revoke', ...clientFacing, limit)
  app.post('/revoke', revokeHandler(ctx))
  app.use('/device_authorization', ...clientFacing, limit)
  app.post('/device_authorization', deviceAuthorizationHandler(ctx))
  app.get('/authorize', authorizeHandler(ctx))
  app.post('/authorize', limit, authorizeDecisionHandler(ctx))
  app.get('/device', deviceHandler(ctx))
  app.post('/device', limit, deviceDecisionHandler(ctx))
  app.get('/connected-apps', connectedAppsHandler(ctx))
  app.post('/connected-apps', limit, disconnectAppHandler(ctx))
  return app
}

function buildContext(options: OAuthServerOptions): OAuthContext {
  const issuer = normalizeIssuer(options.issuer ?? '')
  if (!issuer) {
    throw new TypeError('oauthServer: `issuer` must be the http(s) origin of the app (APP_URL)')
  }
  const secret = options.secret === undefined ? undefined : Secret.from(options.secret)
  if (!secret || secret.reveal().length < MIN_SECRET) {
    throw new TypeError(
      `oauthServer: \`secret\` (MCP_TOKEN_SECRET) needs ${MIN_SECRET}+ characters`,
    )
  }
  if (typeof options.session !== 'function') {
    throw new TypeError('oauthServer: `session` must resolve the signed-in user of a request')
  }
  if (!options.store) throw new TypeError('oauthServer: `store` (a KeyValueStore) is required')
  const clients =
    options.clients ?? (options.database ? createDatabaseClientStore(options.database) : undefined)
  if (!clients) throw new TypeError('oauthServer: pass `database` (or `clients`)')
  const loginPath = options.loginPath ?? '/login'
  if (!loginPath.startsWith('/') || loginPath.startsWith('//')) {
    throw new TypeError('oauthServer: `loginPath` must be a path on this site, like /login')
  }
  const scopes = options.scopes ?? DEFAULT_SCOPES
  if (scopes.length === 0 || scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
    throw new TypeError('oauthServer: `scopes` must be non-empty scope tokens (RFC 6749 §3.3)')
  }
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const logger = options.logger ?? silentLogger()
  const store = options.store
  const families = new TokenFamilies(store, clock, random)
  const grants = new GrantIndex(store, clock)
  return {
    endpoints: endpointsFor(issuer, options.resourcePath ?? '/mcp'),
    scopes,
    scopeDescriptions: { ...DEFAULT_SCOPE_DESCRIPTIONS, ...options.scopeDescriptions },
    loginPath,
    appName: options.appName ?? 'application',
    session: options.session,
    clients,
    documents: new ClientMetadataDocuments(options.clientIdMetadataDocuments ?? {}, {
      store,
      clock,
      logger,
    }),
    store,
    codes: new AuthorizationCodeStore(store, clock, random),
    devices: new DeviceGrantStore(store, clock, random),
    families,
    grants,
    accessTokenKey: hmacKey(secret),
    issuer: new TokenIssuer({
      key: hmacKey(secret),
      issuer,
      clock,
      random,
      families,
      grants,
      logger,
      credentialStamp: options.credentialStamp,
    }),
    clock,
    unusedClientTtlMs: options.unusedClientTtlMs ?? UNUSED_CLIENT_TTL_MS,
    maxUnusedClients: maxUnusedClients(options.maxUnusedClients),
    initialAccessTokens: [options.initialAccessToken ?? []].flat().map((t) => Secret.from(t)),
    stampOf: async (userId) =>
      options.credentialStamp ? currentStampDigest(options.credentialStamp, userId) : undefined,
    random,
    logger,
    trustProxy: options.trustProxy ?? false,
    describeAccess: options.describeAccess,
    activity: options.activity,
    limiters: oauthLimiters(options),
  }
}

/** The app's rate limiters (or memory ones) with the OAuth server's limiters defined. */
function oauthLimiters(options: OAuthServerOptions): RateLimiters {
  const limiters =
    options.rateLimiters ??
    createRateLimiters({ trustProxy: options.trustProxy ?? false, logger: options.logger })
  const minutes15 = 15 * 60
  const hour = 3600
  limiters.define(
    'oauth-register',
    windowLimit(
      options.registrationLimit ?? { points: 20, durationSeconds: hour },
      'registrationLimit',
    ),
  )
  limiters.define(
    'oauth-user-code-ip',
    windowLimit(
      options.userCodeLimits?.perIp ?? { points: 30, durationSeconds: minutes15 },
      'userCodeLimits.perIp',
    ),
  )
  const perUser = windowLimit(
    options.userCodeLimits?.perSession ?? { points: 10, durationSeconds: minutes15 },
    'userCodeLimits.perSession',
  )
  limiters.define(
    'oauth-device-authorization',
    windowLimit(
      options.deviceLimits?.authorizationPerIp ?? { points: 30, durationSeconds: minutes15 },
      'deviceLimits.authorizationPerIp',
    ),
  )
  limiters.define(
    'oauth-cimd-fetch',
    windowLimit(
      options.clientIdMetadataDocuments?.fetchLimit ?? DOCUMENT_FETCH_LIMIT,
      'clientIdMetadataDocuments.fetchLimit',
    ),
  )
  limiters.define(
    'oauth-device-code-unknown',
    windowLimit(
      options.deviceLimits?.unknownCodePerIp ?? { points: 60, durationSeconds: minutes15 },
      'deviceLimits.unknownCodePerIp',
    ),
  )
  limiters.define('oauth-user-code-user', (request) => ({
    key: `user:${request.subject ?? ''}`,
    ...perUser,
  }))
  return limiters
}
