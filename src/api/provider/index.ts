export type { ApiKeyInfo, ApiKeyProvider } from './api-key-provider.ts'
export { API_KEYS_CHANNEL } from './change-feed.ts'
export {
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
  type DatabaseApiKeyProviderOptions,
} from './database-provider.ts'
export {
  type ApiKeyRecord,
  type ApiKeyStatus,
  apiKeyOptionsProblem,
  apiKeyStatus,
  type CreatedApiKey,
  createApiKey,
  listApiKeys,
  type NewApiKeyOptions,
  type RevokeResult,
  revokeApiKey,
  scopesColumn,
} from './management.ts'
export { isValidScope, missingScopes, parseScopesColumn } from './scopes.ts'
