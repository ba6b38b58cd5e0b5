// API keys, scopes and rate limits
export * from './auth/index.ts'
export { ApiKeyRejectedError, type ApiKeyRejection } from './errors.ts'
export * from './keys/index.ts'
export * from './provider/index.ts'
export * from './rate-limit/index.ts'
// Generated REST API: runtime helpers, OpenAPI document, ReDoc docs
export * from './docs/index.ts'
export * from './openapi/index.ts'
export * from './rest/index.ts'
