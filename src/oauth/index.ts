export {
  type BearerAuthOptions,
  type BearerEnv,
  type BearerResult,
  type BearerValidatorOptions,
  bearerAuth,
  createBearerValidator,
  getAccessToken,
  type ValidateBearer,
} from './bearer.ts'
export { type LoadOAuthConfigOptions, loadOAuthConfig, type OAuthConfig } from './config.ts'
export { type OAuthCorsOptions, oauthCors } from './cors.ts'
export { OAuthError, type OAuthErrorCode, OAuthPageError, OAuthRedirectError } from './errors.ts'
export {
  ACCESS_TOKEN_TTL_SECONDS,
  type AccessTokenClaims,
  signAccessToken,
  verifyAccessToken,
} from './protocol/access-token.ts'
