/** What a handler knows about the key that authenticated its request. */
export interface ApiKeyInfo {
  /** The `api_keys` row's id. */
  id: number
  name: string
  /** Granted scopes; `*` grants every scope. */
  scopes: string[]
}

/**
 * Where keys are verified. kiln ships a database implementation
 * (`createDatabaseApiKeyProvider`); any store can implement it.
 */
export interface ApiKeyProvider {
  /**
   * Resolves the key's `ApiKeyInfo`. Rejects with `UnauthenticatedError` (401) when the key
   * is malformed, unknown, revoked, expired or wrong, and with `DependencyError` (500) when
   * the store itself fails.
   */
  verifyKey(rawKey: string): Promise<ApiKeyInfo>
}
