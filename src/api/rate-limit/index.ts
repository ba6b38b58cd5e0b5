// The rate limits live in kiln/core (one throttle for the API, OAuth and logins); kiln/api
// keeps exporting them so generated code and apps import from one place.
export {
  addressKey,
  clientAddress,
  createRateLimiters,
  DEFAULT_API_LIMIT,
  type LimiterDefinition,
  type LimitRequest,
  type LimitResult,
  type LimitRule,
  normalizeAddress,
  perIp,
  perIpAndSubject,
  type RateLimiters,
  type RateLimitersOptions,
  type TrustProxy,
  throttle,
  UNKNOWN_CLIENT,
} from '../../core/http/index.ts'
