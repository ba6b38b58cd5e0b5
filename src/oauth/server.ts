import { Hono } from 'hono'
import { type Clock, systemClock } from '../core/clock.ts'
import { bodyLimit } from '../core/http/body-limit.ts'
import type { TrustProxy } from '../core/http/client-ip.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import { type Logger, silentLogger } from '../core/logger.ts'
import type { Database } from '../db/database.ts'
import { normalizeIssuer } from './config.ts'
import type { Limit, OAuthContext, SessionResolver } from './context.ts'
import { oauthCors } from './cors.ts'
import { authorizeDecisionHandler, authorizeHandler } from './handlers/authorize.ts'
import { deviceDecisionHandler, deviceHandler } from './handlers/device.ts'
import { deviceAuthorizationHandler } from './handlers/device-authorization.ts'
import { metadataHandler } from './handlers/metadata.ts'
import { protectedResourceHandler } from './handlers/protected-resource.ts'
import { registerHandler } from './handlers/register.ts'
import { tokenHandler } from './handlers/token.ts'
import { oauthErrorHandler } from './http/error-response.ts'
import { TokenIssuer } from './issuer.ts'
import { hmacKey } from './protocol/access-token.ts'
import { endpointsFor } from './protocol/metadata.ts'
import { type RandomSource, systemRandom } from './protocol/random.ts'
import { AuthorizationCodeStore } from './store/authorization-codes.ts'
import { type ClientStore, createDatabaseClientStore } from './store/client-store.ts'
import { DeviceGrantStore } from './store/device-grants.ts'
import { TokenFamilies } from './store/token-families.ts'

export interface OAuthServerOptions {
  /** Where registered clients live (the `oauth_clients` table). Or pass `clients`. */
  database?: Database
  /** A client store of your own instead of `database`. */
  clients?: ClientStore
  /** Codes, device grants, refresh-token families and throttles. Redis for many instances. */
  store: KeyValueStore
  /** `MCP_TOKEN_SECRET`: signs access tokens (HS256). At least 32 characters. */
  secret: string
  /** `APP_URL`: the origin the app is served at; the issuer and the base of every endpoint. */
  issuer: string
  /** Path of the protected MCP endpoint. Default `/mcp`. */
  resourcePath?: string
  /** The application's login page; receives `?return_to=<relative path>`. Default `/login`. */
  loginPath?: string
  /** Resolves the signed-in user, tenant and CSRF token of a browser request. */
  session: SessionResolver
  /** Scopes this server grants. Default `['mcp']`. */
  scopes?: string[]
  /** Shown on the consent page ("… wants to access your <appName> account"). */
  appName?: string
  clock?: Clock
  random?: RandomSource
  logger?: Logger
  /** Which proxies' `X-Forwarded-For` the throttles believe (kiln/core `TrustProxy`). */
  trustProxy?: TrustProxy
  /** Client registrations per IP. Default 20 per hour. */
  registrationLimit?: Limit
  /** Wrong device codes per signed-in user and per IP. Defaults 10 and 30 per 15 minutes. */
  userCodeLimits?: { perSession?: Limit; perIp?: Limit }
}

const MIN_SECRET = 32

/**
 * The OAuth 2.1 authorization server for an MCP endpoint, as Hono routes to mount at the
 * root of the app: discovery (RFC 8414, RFC 9728), registration (RFC 7591), authorization
 * code + PKCE with consent, the device grant (RFC 8628) and the token endpoint.
 */
export function oauthServer(options: OAuthServerOptions): Hono {
  const ctx = buildContext(options)
  const app = new Hono()
  app.onError(oauthErrorHandler({ issuer: ctx.endpoints.issuer, logger: ctx.logger }))
  const limit = bodyLimit({ maxBytes: 64 * 1024 })
  const cors = oauthCors()
  const resourcePath = new URL(ctx.endpoints.resource).pathname

  app.use('/.well-known/oauth-authorization-server', cors)
  app.get('/.well-known/oauth-authorization-server', metadataHandler(ctx))
  for (const path of [
    '/.well-known/oauth-protected-resource',
    `/.well-known/oauth-protected-resource${resourcePath}`,
  ]) {
    app.use(path, cors)
    app.get(path, protectedResourceHandler(ctx))
  }
  app.use('/register', cors, limit)
  app.post('/register', registerHandler(ctx))
  app.use('/token', cors, limit)
  app.post('/token', tokenHandler(ctx))
  app.use('/device_authorization', cors, limit)
  app.post('/device_authorization', deviceAuthorizationHandler(ctx))
  app.get('/authorize', authorizeHandler(ctx))
  app.post('/authorize', limit, authorizeDecisionHandler(ctx))
  app.get('/device', deviceHandler(ctx))
  app.post('/device', limit, deviceDecisionHandler(ctx))
  return app
}

function buildContext(options: OAuthServerOptions): OAuthContext {
  const issuer = normalizeIssuer(options.issuer ?? '')
  if (!issuer) {
    throw new TypeError('oauthServer: `issuer` must be the http(s) origin of the app (APP_URL)')
  }
  if (typeof options.secret !== 'string' || options.secret.length < MIN_SECRET) {
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
  const scopes = options.scopes ?? ['mcp']
  if (scopes.length === 0 || scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
    throw new TypeError('oauthServer: `scopes` must be non-empty scope tokens (RFC 6749 §3.3)')
  }
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const logger = options.logger ?? silentLogger()
  const store = options.store
  const families = new TokenFamilies(store, clock, random)
  const minutes15 = 15 * 60_000
  return {
    endpoints: endpointsFor(issuer, options.resourcePath ?? '/mcp'),
    scopes,
    loginPath,
    appName: options.appName ?? 'application',
    session: options.session,
    clients,
    store,
    codes: new AuthorizationCodeStore(store, clock, random),
    devices: new DeviceGrantStore(store, clock, random),
    families,
    issuer: new TokenIssuer({
      key: hmacKey(options.secret),
      issuer,
      clock,
      random,
      families,
      logger,
    }),
    clock,
    random,
    logger,
    trustProxy: options.trustProxy ?? false,
    limits: {
      registration: options.registrationLimit ?? { max: 20, windowMs: 3600_000 },
      userCodePerSession: options.userCodeLimits?.perSession ?? { max: 10, windowMs: minutes15 },
      userCodePerIp: options.userCodeLimits?.perIp ?? { max: 30, windowMs: minutes15 },
    },
  }
}
