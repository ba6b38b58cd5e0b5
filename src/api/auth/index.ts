export {
  type ApiEnv,
  type ApiKeyAuthOptions,
  apiKeyAuth,
  bearerCredential,
  getApiKey,
  requireScopes,
} from './api-key-auth.ts'
export { routeScopes, scopeGuard } from './scope-guard.ts'
