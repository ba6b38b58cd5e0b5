/**
 * Failures on incoming data. Each subclass has a stable `code` and an HTTP `status`;
 * `errorHandler` (./http-errors.ts) is the one place that turns them into responses.
 * Programmer misuse is not a KilnError: it is a TypeError thrown at start-up.
 */
export class KilnError extends Error {
  readonly code: string = 'kiln_error'
  readonly status: number = 500
  /** Extra JSON fields merged into the response body. */
  readonly details: Record<string, unknown> | undefined

  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.details = options?.details
  }
}

export class BadRequestError extends KilnError {
  override readonly code = 'bad_request'
  override readonly status = 400
}

export class UnauthenticatedError extends KilnError {
  override readonly code = 'unauthenticated'
  override readonly status = 401
  constructor(message = 'Unauthenticated', options?: { cause?: unknown }) {
    super(message, options)
  }
}

export class ForbiddenError extends KilnError {
  override readonly code = 'forbidden'
  override readonly status = 403
}

export class NotFoundError extends KilnError {
  override readonly code = 'not_found'
  override readonly status = 404
  constructor(message = 'Not Found', options?: { cause?: unknown }) {
    super(message, options)
  }
}

export class PayloadTooLargeError extends KilnError {
  override readonly code = 'payload_too_large'
  override readonly status = 413
  constructor(message = 'Payload Too Large') {
    super(message)
  }
}

export class UnsupportedMediaTypeError extends KilnError {
  override readonly code = 'unsupported_media_type'
  override readonly status = 415
  constructor(message = 'Unsupported Media Type') {
    super(message)
  }
}

/**
 * The client closed the connection before its body arrived in full (a cancelled upload, a
 * dropped network). Nobody is left to read an answer: logged at debug, without a stack.
 */
export class RequestAbortedError extends KilnError {
  override readonly code = 'request_aborted'
  override readonly status = 400
  constructor(options?: { cause?: unknown; message?: string }) {
    super(options?.message ?? 'Bad Request: the request body was not received in full', options)
  }
}

export type FieldErrors = Record<string, string[]>

export class ValidationError extends KilnError {
  override readonly code = 'validation_failed'
  override readonly status = 422
  readonly errors: FieldErrors

  constructor(errors: FieldErrors, message = 'Validation failed') {
    super(message, { details: { errors } })
    this.errors = errors
  }
}

export class TooManyRequestsError extends KilnError {
  override readonly code = 'too_many_requests'
  override readonly status = 429
  readonly retryAfterSeconds: number

  constructor(retryAfterSeconds: number, message = 'Too Many Requests') {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/**
 * The server cannot answer this request now, though it may later (a query past its time
 * budget): 503, logged as a server error.
 */
export class ServiceUnavailableError extends KilnError {
  override readonly code: string = 'service_unavailable'
  override readonly status = 503
}

/** A real dependency (database, Redis, a provider API) failed. Logged with its cause. */
export class DependencyError extends KilnError {
  override readonly code = 'dependency_failed'
  override readonly status = 500
}
