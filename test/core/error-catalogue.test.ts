import { describe, expect, it, vi } from 'vitest'
import { ApiKeyRejectedError } from '../../src/api/errors.ts'
import { ConflictError } from '../../src/api/rest/db-errors.ts'
import { PreconditionFailedError } from '../../src/api/rest/preconditions.ts'
import { InvalidPurgePathError, PurgeFailedError } from '../../src/cdn/errors.ts'
import { ConfigError } from '../../src/core/config/parse-env.ts'
import { ERROR_CATALOGUE, type KilnErrorCode } from '../../src/core/error-catalogue.ts'
import {
  BadRequestError,
  DependencyError,
  ForbiddenError,
  InvalidJsonError,
  isKilnError,
  KilnError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RequestAbortedError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../src/core/errors.ts'
import { QueryCancelledError, QueryTimeoutError } from '../../src/db/query-budget.ts'
import {
  AccessTokenExpiredError,
  MessagingApiError,
  MessagingError,
  MessagingThrottledError,
  MessagingTimeoutError,
  ReengagementRequiredError,
} from '../../src/messaging/errors.ts'
import { InvalidSignatureError, WebhookQueueError } from '../../src/messaging/webhook.ts'
import { OAuthError, OAuthPageError, OAuthRedirectError } from '../../src/oauth/errors.ts'
import {
  FileNotFoundError,
  InvalidPathError,
  StorageIoError,
  StorageUnsupportedError,
  UnknownDiskError,
} from '../../src/storage/errors.ts'

const provider = {
  providerCode: 131047,
  providerSubcode: undefined,
  providerType: undefined,
  providerDetails: undefined,
  fbtraceId: undefined,
  httpStatus: 400,
}

/** One instance of every KilnError class in src/, each code in the catalogue. */
const EVERY_CLASS: KilnError[] = [
  new KilnError('x'),
  new BadRequestError('x'),
  new InvalidJsonError(),
  new UnauthenticatedError(),
  new ForbiddenError('x'),
  new NotFoundError(),
  new MethodNotAllowedError(['POST']),
  new PayloadTooLargeError(),
  new UnsupportedMediaTypeError(),
  new RequestAbortedError(),
  new ValidationError({ name: ['is required'] }),
  new TooManyRequestsError(3),
  new ServiceUnavailableError('x'),
  new DependencyError('x'),
  new ConfigError({ APP_URL: 'expected a URL' }),
  new ApiKeyRejectedError('unknown'),
  new PreconditionFailedError('x'),
  new ConflictError('x'),
  new QueryTimeoutError(5000, 'posts'),
  new QueryCancelledError(),
  new OAuthError('invalid_grant', 'x'),
  new OAuthRedirectError('access_denied', 'x', {
    redirectUri: 'https://c.example/cb',
    state: undefined,
  }),
  new OAuthPageError('unknown_client', 'Unknown application', 'x'),
  new InvalidSignatureError(),
  new WebhookQueueError('x'),
  new MessagingError('x'),
  new MessagingApiError('x', provider),
  new MessagingThrottledError('x', provider),
  new ReengagementRequiredError('x', provider),
  new AccessTokenExpiredError('x', provider),
  new MessagingTimeoutError('x'),
  new FileNotFoundError('a.txt'),
  new InvalidPathError('absolute'),
  new UnknownDiskError('s3', ['local']),
  new StorageUnsupportedError('x'),
  new StorageIoError('x'),
  new InvalidPurgePathError('x'),
  new PurgeFailedError('cloudflare', [{ paths: ['/a'], reason: 'refused' }], 1),
]

describe('the error catalogue', () => {
  it('gives every code an HTTP status and a public message', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[a-z][a-z_]*[a-z]$/)
      expect(Number.isInteger(entry.status) && entry.status >= 400 && entry.status < 600).toBe(true)
      expect(entry.message.trim().length, code).toBeGreaterThan(0)
      expect(entry.arises.trim().length, code).toBeGreaterThan(0)
    }
  })

  it('holds the code of every error class, and the class answers the code’s status', () => {
    for (const error of EVERY_CLASS) {
      expect(Object.keys(ERROR_CATALOGUE), error.name).toContain(error.code)
      const expected =
        error instanceof OAuthRedirectError ? 302 : ERROR_CATALOGUE[error.code].status
      expect(error.status, error.name).toBe(expected)
    }
  })

  it('gives an error made without a message its code’s public message', () => {
    const defaults: [KilnError, KilnErrorCode][] = [
      [new UnauthenticatedError(), 'unauthenticated'],
      [new NotFoundError(), 'not_found'],
      [new PayloadTooLargeError(), 'payload_too_large'],
      [new TooManyRequestsError(1), 'too_many_requests'],
      [new InvalidSignatureError(), 'invalid_signature'],
      [new InvalidJsonError(), 'invalid_json'],
    ]
    for (const [error, code] of defaults) expect(error.message).toBe(ERROR_CATALOGUE[code].message)
  })

  it('renders an error: status, body and its own headers', async () => {
    const response = new TooManyRequestsError(7).toResponse()
    expect(response.status).toBe(429)
    expect(response.headers.get('Retry-After')).toBe('7')
    expect(await response.json()).toEqual({ error: 'Too Many Requests', code: 'too_many_requests' })
    const invalid = new ValidationError({ name: ['is required'] })
    expect(invalid.body()).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      errors: { name: ['is required'] },
    })
    expect(new MethodNotAllowedError(['GET', 'POST']).headers()).toEqual({ Allow: 'GET, POST' })
    // A server error's details and a configuration's variable names stay in the log.
    expect(new ConfigError({ SECRET: 'expected 32 bytes' }).body()).toEqual({
      error: 'Internal Server Error',
      code: 'internal_error',
    })
  })
})

describe('isKilnError', () => {
  it('recognises every KilnError, and nothing else', () => {
    for (const error of EVERY_CLASS) expect(isKilnError(error), error.name).toBe(true)
    expect(isKilnError(new Error('x'))).toBe(false)
    expect(isKilnError({ code: 'not_found', status: 404, message: 'x' })).toBe(false)
    expect(isKilnError(null)).toBe(false)
    expect(isKilnError('not_found')).toBe(false)
  })

  it('recognises an error of another copy of kiln, which instanceof does not', async () => {
    // A second instance of the module, as an app with its own copy of kiln would load.
    vi.resetModules()
    const copy = await import('../../src/core/errors.ts')
    expect(copy.KilnError).not.toBe(KilnError)
    const foreign = new copy.NotFoundError()
    expect(foreign instanceof KilnError).toBe(false)
    expect(isKilnError(foreign)).toBe(true)
    expect(copy.isKilnError(new NotFoundError())).toBe(true)
    // The brand is the registry's `kiln.error` symbol: any copy's errors carry that one key.
    const duplicate = { [Symbol.for('kiln.error')]: true, code: 'not_found', message: 'Not Found' }
    expect(isKilnError(duplicate)).toBe(true)
    expect(isKilnError({ [Symbol('kiln.error')]: true, code: 'not_found' })).toBe(false)
  })
})
