import '../core/check-peers.ts'

export { safeReturnTo } from '../core/http/return-to.ts'
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
export type { AccessTokenClaims } from './protocol/access-token.ts'
export type { RegisteredClient } from './protocol/client-metadata.ts'
export type { AccessGrant, GrantAction, GrantableAccess, GrantableModel } from './protocol/grant.ts'
export { type OAuthServerOptions, oauthServer } from './server.ts'
export type { ClientStore } from './store/client-store.ts'
