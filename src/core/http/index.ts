export {
  type BodyLimitOptions,
  bodyLimit,
  DEFAULT_BODY_LIMIT,
  readBodyBytes,
} from './body-limit.ts'
export {
  addressKey,
  checkTrustProxy,
  clientAddress,
  normalizeAddress,
  parseTrustedProxies,
  resolveClientAddress,
  type TrustProxy,
  UNKNOWN_CLIENT,
} from './client-ip.ts'
export { constantTimeEqual, digestsEqual } from './constant-time.ts'
export { DEFAULT_HEALTH_CHECK_MS, type HealthOptions, healthRoutes } from './health.ts'
export { escapeHtml } from './html.ts'
export {
  type OriginGuardOptions,
  type OriginPolicy,
  originGuard,
  originPolicy,
  originRefusal,
} from './origin-guard.ts'
export {
  hasResponseHeader,
  type PlainHeaders,
  type PlainResponsesOptions,
  plainResponses,
  setRateLimitHeaders,
} from './plain-response.ts'
export {
  createRateLimiters,
  DEFAULT_API_LIMIT,
  type LegacyWindowLimit,
  type LimitedApiKey,
  type LimiterDefinition,
  type LimitRequest,
  type LimitResult,
  type LimitRule,
  perIp,
  perIpAndSubject,
  type RateLimiters,
  type RateLimitersOptions,
  type WindowLimit,
  type WindowLimitOption,
  windowLimit,
} from './rate-limiters.ts'
export { type RequestLogOptions, requestLog, setRequestActor } from './request-log.ts'
export { editResponseHeaders } from './response-headers.ts'
export {
  type CspDirectives,
  FILE_SECURITY_HEADERS,
  NO_SNIFF,
  noSniff,
  PAGE_CSP,
  type SecurityHeadersOptions,
  securityHeaders,
  securityHeaderValues,
} from './security-headers.ts'
export { assertAllowed, limitRequest, throttle } from './throttle.ts'
