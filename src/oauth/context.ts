import type { Clock } from '../core/clock.ts'
import type { TrustProxy } from '../core/http/client-ip.ts'
import type { RateLimiters, WindowLimitOption } from '../core/http/rate-limiters.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import type { Logger } from '../core/logger.ts'
import type { Secret } from '../core/secret.ts'
import type { AuditReader } from '../db/audit/audit-log.ts'
import type { ClientMetadataDocuments } from './cimd/metadata-documents.ts'
import type { TokenIssuer } from './issuer.ts'
import type { GrantableAccess } from './protocol/grant.ts'
import type { Endpoints } from './protocol/metadata.ts'
import type { RandomSource } from './protocol/random.ts'
import type { AuthorizationCodeStore } from './store/authorization-codes.ts'
import type { ClientStore } from './store/client-store.ts'
import type { DeviceGrantStore } from './store/device-grants.ts'
import type { GrantIndex } from './store/grants.ts'
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

/**
 * A throttle of the OAuth server.
 * @deprecated kiln/core's `WindowLimitOption`, the one type of the OAuth and MCP limits.
 */
export type Limit = WindowLimitOption

/** Everything the handlers share, built once by `oauthServer`. */
export interface OAuthContext {
  endpoints: Endpoints
  scopes: string[]
  scopeDescriptions: Readonly<Record<string, string>>
  loginPath: string
  appName: string
  session: SessionResolver
  clients: ClientStore
  documents: ClientMetadataDocuments
  store: KeyValueStore
  codes: AuthorizationCodeStore
  devices: DeviceGrantStore
  families: TokenFamilies
  grants: GrantIndex
  issuer: TokenIssuer
  /** The HMAC key access tokens are signed with (to verify them at /revoke). */
  accessTokenKey: Uint8Array
  clock: Clock
  /** Registered clients without a token after this long are removed; false keeps them. */
  unusedClientTtlMs: number | false
  /** Registered clients that never got a token, kept at most (the oldest go first). */
  maxUnusedClients: number
  /** Tokens /register requires (RFC 7591 §3 initial access token); empty: it is open. */
  initialAccessTokens: Secret[]
  /** Digest of the user's credential stamp now; undefined without `credentialStamp`. */
  stampOf(userId: string): Promise<string | undefined>
  random: RandomSource
  logger: Logger
  trustProxy: TrustProxy
  /** What the app lets assistants do, offered model by model on the consent page. */
  describeAccess: (() => GrantableAccess) | undefined
  /** What the data tools did, for the connected-apps page; undefined without an audit trail. */
  activity: AuditReader | undefined
  /** kiln's throttle, with the `oauth-*` limiters `oauthServer` defines. */
  limiters: RateLimiters
}
