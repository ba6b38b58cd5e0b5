import '../core/check-peers.ts'

export {
  type BearerAuthOptions,
  type BearerEnv,
  type BearerResult,
  type BearerValidatorOptions,
  bearerAuth,
  createBearerValidator,
  getAccessToken,
  insufficientScopeChallenge,
  type ValidateBearer,
} from './bearer.ts'
export { type LoadOAuthConfigOptions, loadOAuthConfig, type OAuthConfig } from './config.ts'
export type { Limit, OAuthSession, SessionResolver } from './context.ts'
export { type OAuthCorsOptions, oauthCors } from './cors.ts'
export { OAuthError, type OAuthErrorCode, OAuthPageError, OAuthRedirectError } from './errors.ts'
export {
  type ConnectedApp,
  createOAuthGrants,
  type OAuthGrants,
  type OAuthGrantsOptions,
} from './grants.ts'
export { PAGE_SECURITY_HEADERS } from './http/page-response.ts'
export {
  ACCESS_TOKEN_TTL_SECONDS,
  type AccessTokenClaims,
  signAccessToken,
  verifyAccessToken,
} from './protocol/access-token.ts'
export type { RegisteredClient } from './protocol/client-metadata.ts'
export type {
  AccessGrant,
  GrantAction,
  GrantableAccess,
  GrantableModel,
} from './protocol/grant.ts'
export { s256Challenge } from './protocol/pkce.ts'
export { safeReturnTo } from './protocol/return-to.ts'
export { DEFAULT_SCOPES, MCP_READ_SCOPE, MCP_WRITE_SCOPE } from './protocol/scope.ts'
export { formatUserCode, normalizeUserCode } from './protocol/user-code.ts'
export { type OAuthServerOptions, oauthServer } from './server.ts'
export {
  type ClientStore,
  createDatabaseClientStore,
  MemoryClientStore,
} from './store/client-store.ts'
