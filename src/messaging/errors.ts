import { KilnError, type KilnErrorCode } from '../core/errors.ts'

/** Sending failed. Subclasses say why; `code` is kiln's stable string, never the provider's number. */
export class MessagingError extends KilnError {
  override readonly code: KilnErrorCode = 'messaging_failed'
}

/** The provider's error fields, carried by `MessagingApiError` and its subclasses. */
export interface ProviderErrorFields {
  /** The provider's `error.code` (130429, 131047, 190, …). */
  providerCode: number | undefined
  /** The provider's `error.error_subcode`. */
  providerSubcode: number | undefined
  /** The provider's `error.type` (e.g. `OAuthException`). */
  providerType: string | undefined
  /** The provider's `error.error_data.details`. */
  providerDetails: string | undefined
  /** The provider's `error.fbtrace_id`, to quote to its support. */
  fbtraceId: string | undefined
  /** The HTTP status of the provider's answer. */
  httpStatus: number
}

/**
 * The Graph API answered with an error body. The message is the provider's `error.message`;
 * decide on `providerCode`, not on the HTTP status.
 */
export class MessagingApiError extends MessagingError implements ProviderErrorFields {
  override readonly code: KilnErrorCode = 'messaging_api_error'
  readonly providerCode: number | undefined
  readonly providerSubcode: number | undefined
  readonly providerType: string | undefined
  readonly providerDetails: string | undefined
  readonly fbtraceId: string | undefined
  readonly httpStatus: number

  constructor(message: string, fields: ProviderErrorFields) {
    super(message)
    this.providerCode = fields.providerCode
    this.providerSubcode = fields.providerSubcode
    this.providerType = fields.providerType
    this.providerDetails = fields.providerDetails
    this.fbtraceId = fields.fbtraceId
    this.httpStatus = fields.httpStatus
  }
}

/** 130429 (throughput) or 131056 (pair rate limit), still failing after the bounded retries. */
export class MessagingThrottledError extends MessagingApiError {
  override readonly code: KilnErrorCode = 'messaging_throttled'
}

/**
 * 131047: more than 24 hours have passed since the customer last wrote. Only an approved
 * template message can reach them now: send `Template(...)` instead of `Text(...)`.
 */
export class ReengagementRequiredError extends MessagingApiError {
  override readonly code: KilnErrorCode = 'messaging_reengagement_required'
}

/** 190: the access token expired or was revoked. Mint a new permanent token; retrying won't help. */
export class AccessTokenExpiredError extends MessagingApiError {
  override readonly code: KilnErrorCode = 'messaging_token_expired'
}

/**
 * The Graph API did not answer within the timeout. Not retried: the message may have been
 * accepted, and the provider has no idempotency key, so a retry could send it twice.
 */
export class MessagingTimeoutError extends MessagingError {
  override readonly code: KilnErrorCode = 'messaging_timeout'
}
