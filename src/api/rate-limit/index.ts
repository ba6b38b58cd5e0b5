export {
  addressKey,
  clientAddress,
  normalizeAddress,
  type TrustProxy,
  UNKNOWN_CLIENT,
} from './client-ip.ts'
export {
  createRateLimiters,
  DEFAULT_API_LIMIT,
  type LimiterDefinition,
  type LimitRequest,
  type LimitResult,
  type LimitRule,
  perIp,
  type RateLimiters,
  type RateLimitersOptions,
} from './rate-limiters.ts'
export { throttle } from './throttle.ts'
export { type TwoStageThrottle, twoStageThrottle } from './two-stage.ts'
