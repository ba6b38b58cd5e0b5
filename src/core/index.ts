import './check-peers.ts'

export { type Clock, ManualClock, systemClock } from './clock.ts'
export {
  type AppConfig,
  appEnvSchema,
  ConfigError,
  type Env,
  envBoolean,
  envUrl,
  loadAppConfig,
  parseEnv,
} from './config/index.ts'
export {
  BadRequestError,
  DependencyError,
  type FieldErrors,
  ForbiddenError,
  KilnError,
  NotFoundError,
  PayloadTooLargeError,
  RequestAbortedError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from './errors.ts'
export * from './events/index.ts'
export * from './http/index.ts'
export { type ErrorHandlerOptions, errorHandler } from './http-errors.ts'
export * from './kv/index.ts'
export {
  createLogger,
  type LogFormat,
  type Logger,
  type LoggerOptions,
  Redactor,
  silentLogger,
} from './logger.ts'
export * from './queue/index.ts'
export {
  type ConnectOptions,
  pingRedis,
  type Redis,
  RedisConnections,
  redisAddress,
} from './redis.ts'
export {
  type BackoffOptions,
  backoffDelayMs,
  type RetryOptions,
  retry,
  type TryOutcome,
} from './retry.ts'
export { redactSecrets, revealSecret, Secret } from './secret.ts'
export { createSharedState, type SharedState, type SharedStateOptions } from './shared-state.ts'
