import { type KilnErrorCode, messageOf, statusOf } from './error-catalogue.ts'

export {
  ERROR_CATALOGUE,
  type ErrorCatalogueEntry,
  type KilnErrorCode,
  messageOf,
  statusOf,
} from './error-catalogue.ts'

/**
 * The brand of every `KilnError`, in the global symbol registry: an error made by another copy
 * of kiln (an app module loaded with its own `node_modules`) carries the same one, where
 * `instanceof` and a class name would not tell.
 */
const KILN_ERROR: unique symbol = Symbol.for('kiln.error')

/**
 * Whether `value` is a `KilnError`, from this copy of kiln or another. Decide on its `code`
 * (a `KilnErrorCode`), never on its class name or message.
 */
export function isKilnError(value: unknown): value is KilnError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [KILN_ERROR]?: unknown })[KILN_ERROR] === true
  )
}

/**
 * Failures on incoming data. Each subclass has a stable `code` from the catalogue
 * (./error-catalogue.ts), which gives its HTTP `status` and its default message; the error
 * renders itself (`body`, `headers`, `toResponse`), and `errorHandler` (./http-errors.ts) is
 * the one place an app's errors become responses. Programmer misuse is not a KilnError: it is
 * a TypeError thrown at start-up.
 */
export class KilnError extends Error {
  declare readonly [KILN_ERROR]: true
  readonly code: KilnErrorCode = 'internal_error'
  /** Extra JSON fields merged into the response body. */
  readonly details: Record<string, unknown> | undefined

  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.details = options?.details
  }

  /** The HTTP status, from the catalogue entry of `code`. */
  get status(): number {
    return statusOf(this.code)
  }

  /**
   * The JSON body: `{ error, code, ...details }`, the catalogue's `code` beside the message so
   * that a client branches on it; a server error's details stay in the log.
   */
  body(): Record<string, unknown> {
    const body = { error: this.message, code: this.code }
    return this.status >= 500 ? body : { ...body, ...this.details }
  }

  /** Headers the answer carries whoever renders it (`Retry-After`, `Allow`). */
  headers(): Record<string, string> {
    return {}
  }

  /**
   * The error as a JSON response: its status, `headers()` then `headers`, and `body()` unless
   * a protocol wraps it in its own envelope (`body`).
   */
  toResponse(headers: Record<string, string> = {}, body: unknown = this.body()): Response {
    return new Response(JSON.stringify(body), {
      status: this.status,
      headers: { 'Content-Type': 'application/json', ...this.headers(), ...headers },
    })
  }

  /**
   * The response Hono's own error handler answers with (its `HTTPException` contract): an app
   * without kiln's `errorHandler` still answers a KilnError with its status and body, and
   * does not print it as an unexpected error.
   */
  getResponse(): Response {
    return this.toResponse()
  }
}
Object.defineProperty(KilnError.prototype, KILN_ERROR, { value: true })

/**
 * A malformed request: a JSON body that does not parse, a header or parameter the route cannot
 * use (`If-Match` on a bulk update). Code `bad_request`, 400; the message says what was wrong.
 */
export class BadRequestError extends KilnError {
  override readonly code: KilnErrorCode = 'bad_request'
}

/** The body is not JSON: 400 `Invalid JSON`. */
export class InvalidJsonError extends KilnError {
  override readonly code = 'invalid_json'
  constructor(message = messageOf('invalid_json')) {
    super(message)
  }
}

/**
 * The request carries no credentials, or credentials that were refused (an API key, a session,
 * a login form). Code `unauthenticated`, 401 `Unauthenticated` unless given another message.
 */
export class UnauthenticatedError extends KilnError {
  override readonly code = 'unauthenticated'
  constructor(message = messageOf('unauthenticated'), options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The request may not do this: a missing scope, a foreign `Origin`, an expired or forged signed
 * link. Code `forbidden`, 403; the message says what was refused (the scopes missing).
 */
export class ForbiddenError extends KilnError {
  override readonly code = 'forbidden'
}

/**
 * No record with this identifier, or no such route. Code `not_found`, 404 `Not Found`. An
 * identifier the column could not hold (malformed, out of range) names no record either, so it
 * answers the same (`parseId`).
 */
export class NotFoundError extends KilnError {
  override readonly code = 'not_found'
  constructor(message = messageOf('not_found'), options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The method is not served here; `Allow` names those that are. */
export class MethodNotAllowedError extends KilnError {
  override readonly code = 'method_not_allowed'
  readonly allow: string[]
  constructor(allow: string[], message = messageOf('method_not_allowed')) {
    super(message)
    this.allow = allow
  }
  override headers(): Record<string, string> {
    return { Allow: this.allow.join(', ') }
  }
}

/**
 * The body is over the route's limit (`bodyLimit`, 1 MiB by default), refused before it is
 * read in full. Code `payload_too_large`, 413 `Payload Too Large`.
 */
export class PayloadTooLargeError extends KilnError {
  override readonly code = 'payload_too_large'
  constructor(message = messageOf('payload_too_large')) {
    super(message)
  }
}

/**
 * The body is not `application/json` where JSON is expected. Code `unsupported_media_type`,
 * 415 `Unsupported Media Type`.
 */
export class UnsupportedMediaTypeError extends KilnError {
  override readonly code = 'unsupported_media_type'
  constructor(message = messageOf('unsupported_media_type')) {
    super(message)
  }
}

/**
 * The client closed the connection before its body arrived in full (a cancelled upload, a
 * dropped network). Nobody is left to read an answer: logged at debug, without a stack.
 */
export class RequestAbortedError extends KilnError {
  override readonly code = 'request_aborted'
  constructor(options?: { cause?: unknown; message?: string }) {
    super(options?.message ?? messageOf('request_aborted'), options)
  }
}

/**
 * The messages of a `ValidationError`, by field: a dotted path for a nested one (`address.zip`),
 * `_body` for the body as a whole.
 */
export type FieldErrors = Record<string, string[]>

/**
 * A body or query that fails its schema. Code `validation_failed`, 422 `Validation failed`; the
 * body adds `errors`, each field with its messages, so a client can show them beside its inputs.
 */
export class ValidationError extends KilnError {
  override readonly code = 'validation_failed'
  /** Each failing field with its messages; sent as the body's `errors`. */
  readonly errors: FieldErrors

  constructor(errors: FieldErrors, message = messageOf('validation_failed')) {
    super(message, { details: { errors } })
    this.errors = errors
  }
}

/**
 * A rate limit reached (`throttle`, the login form). Code `too_many_requests`, 429
 * `Too Many Requests`, with `Retry-After` set to `retryAfterSeconds`.
 */
export class TooManyRequestsError extends KilnError {
  override readonly code = 'too_many_requests'
  /** When the client may try again, in seconds: the `Retry-After` header. */
  readonly retryAfterSeconds: number

  constructor(retryAfterSeconds: number, message = messageOf('too_many_requests')) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }

  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) }
  }
}

/**
 * The server cannot answer this request now, though it may later (a query past its time
 * budget): 503, logged as a server error.
 */
export class ServiceUnavailableError extends KilnError {
  override readonly code: KilnErrorCode = 'service_unavailable'

  /** `Retry-After`: a client tries again in a few seconds, not at once. */
  override headers(): Record<string, string> {
    return { 'Retry-After': String(RETRY_AFTER_OUTAGE_SECONDS) }
  }
}

/** When a client may try a request again that a dependency could not answer (5 s). */
export const RETRY_AFTER_OUTAGE_SECONDS = 5

/**
 * A dependency (the database, Redis) did not answer within its time budget, or refused the
 * connection: 503 naming it, with `Retry-After`. `errorHandler` answers it for the drivers'
 * own errors (`outageOf`), and the outage is logged once, not per request.
 */
export class DependencyUnavailableError extends ServiceUnavailableError {
  override readonly code = 'dependency_unavailable'
  /** `database`, `redis`, or the address that refused the connection (never shown). */
  readonly dependency: string

  constructor(dependency: string, options?: { cause?: unknown }) {
    const named =
      dependency === 'database' || dependency === 'redis' ? `the ${dependency}` : 'a dependency'
    super(`Service Unavailable: ${named} did not answer; try again shortly`, options)
    this.dependency = dependency
  }
}

/** A real dependency (database, Redis, a provider API) failed. Logged with its cause. */
export class DependencyError extends KilnError {
  override readonly code = 'dependency_failed'
}

/**
 * A value does not fit its field (a string where a number goes, an integer out of range): the
 * signal the REST query parser and the MCP data tools catch to answer their own 422 or tool
 * error. Not a KilnError: it never reaches a response as is.
 */
export class FieldValueError extends Error {}
