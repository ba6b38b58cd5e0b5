// API keys, scopes and rate limits: auth, errors, keys, provider, rate-limit.
// The generated REST API's runtime helpers, list query grammar, OpenAPI document and ReDoc
// docs: rest, query, openapi, docs.
import '../core/check-peers.ts'

export * from './auth/index.ts'
export * from './client/index.ts'
export * from './docs/index.ts'
export { ApiKeyRejectedError, type ApiKeyRejection } from './errors.ts'
export * from './keys/index.ts'
export * from './openapi/index.ts'
export * from './provider/index.ts'
export * from './query/index.ts'
export * from './rate-limit/index.ts'
export * from './rest/index.ts'
