import { createDatabaseApiKeyProvider, type DatabaseApiKeyProviderOptions } from 'kilnjs/api'

/** The `api_keys` table (created by kiln's migration and ./migrations). */
export { apiKeysPg as apiKeys } from 'kilnjs/db'

/** The app's `ApiKeyProvider`: keys in `api_keys`, with revocation and expiry checks. */
export function apiKeyProvider(options: DatabaseApiKeyProviderOptions) {
  return createDatabaseApiKeyProvider(options)
}
