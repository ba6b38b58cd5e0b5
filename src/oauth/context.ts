import type { Clock } from '../core/clock.ts'
import type { TrustProxy } from '../core/http/client-ip.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import type { Logger } from '../core/logger.ts'
import type { TokenIssuer } from './issuer.ts'
import type { Endpoints } from './protocol/metadata.ts'
import type { RandomSource } from './protocol/random.ts'
import type { AuthorizationCodeStore } from './store/authorization-codes.ts'
import type { ClientStore } from './store/client-store.ts'
import type { DeviceGrantStore } from './store/device-grants.ts'
import type { TokenFamilies } from './store/token-families.ts'

/** The signed-in person, as the application's session middleware knows them. */
export interface OAuthSession {
  userId: string
  /** The tenant of the session; absent in single-tenant applications. */
  tenantId?: string
  /** The session's CSRF token, embedded in consent forms and checked on submit. */
  csrfToken: string
}

/** Resolves the session of a browser request; undefined when nobody is signed in. */
export type SessionResolver = (request: Request) => Promise<OAuthSession | undefined>

export interface Limit {
  max: number
  windowMs: number
}

/** Everything the handlers share, built once by `oauthServer`. */
export interface OAuthContext {
  endpoints: Endpoints
  scopes: string[]
  loginPath: string
  appName: string
  session: SessionResolver
  clients: ClientStore
  store: KeyValueStore
  codes: AuthorizationCodeStore
  devices: DeviceGrantStore
  families: TokenFamilies
  issuer: TokenIssuer
  clock: Clock
  random: RandomSource
  logger: Logger
  trustProxy: TrustProxy
  limits: { registration: Limit; userCodePerSession: Limit; userCodePerIp: Limit }
}
