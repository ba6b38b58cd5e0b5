export {
  API_KEY_LENGTH,
  API_KEY_PREFIX_LENGTH,
  API_KEY_SECRET_LENGTH,
  API_KEY_SERVICE_PREFIX,
  type ApiKeyEnv,
  digestApiKey,
  digestMatches,
  type GenerateApiKeyOptions,
  type GeneratedApiKey,
  generateApiKey,
  hashApiKey,
  isApiKeyShaped,
  type ParsedApiKey,
  parseApiKey,
} from './api-key.ts'
export {
  type ApiKeyInsertValues,
  apiKeyInsertSnippet,
  apiKeyInsertSql,
  sqlString,
} from './insert-statement.ts'
