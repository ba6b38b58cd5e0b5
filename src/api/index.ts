// API keys, scopes and rate limits
export * from './auth/index.ts'
export { ApiKeyRejectedError, type ApiKeyRejection } from './errors.ts'
export * from './keys/index.ts'
export * from './provider/index.ts'
export * from './rate-limit/index.ts'
