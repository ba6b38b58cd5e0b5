import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { describe, expect, it } from 'vitest'
import { generateApiClient } from '../../src/api/client/generate.ts'
import { errorSchemas } from '../../src/api/openapi/error-responses.ts'
import { ERROR_CATALOGUE } from '../../src/core/error-catalogue.ts'
import { ForbiddenError, isKilnError } from '../../src/core/errors.ts'
import { errorHandler } from '../../src/core/http-errors.ts'
import { silentLogger } from '../../src/core/logger.ts'

/**
 * What a client of any copy of kiln relies on, pinned: the brand that marks a KilnError, the
 * status of every code (a code that changed its status would change what clients branch on),
 * and `{ error, code }` in every error body, in the OpenAPI documents and in the typed client.
 */

/** Every code by its status, as clients see them. A change here is a change of kiln's API. */
const CODES_BY_STATUS: Record<number, string[]> = {
  400: [
    'bad_request',
    'invalid_json',
    'request_aborted',
    'invalid_request',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'unsupported_response_type',
    'invalid_scope',
    'access_denied',
    'invalid_redirect_uri',
    'invalid_client_metadata',
    'authorization_pending',
    'slow_down',
    'expired_token',
    'invalid_target',
    'unknown_client',
    'invalid_path',
    'invalid_purge_path',
  ],
  401: ['unauthenticated', 'invalid_client', 'invalid_token', 'invalid_signature'],
  403: ['forbidden', 'insufficient_scope'],
  404: ['not_found', 'file_not_found', 'unknown_disk'],
  405: ['method_not_allowed'],
  409: ['conflict'],
  412: ['precondition_failed'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  422: ['validation_failed'],
  429: ['too_many_requests'],
  500: [
    'internal_error',
    'dependency_failed',
    'config_invalid',
    'server_error',
    'queue_error',
    'storage_io',
  ],
  501: ['storage_unsupported'],
  502: [
    'messaging_failed',
    'messaging_api_error',
    'messaging_throttled',
    'messaging_reengagement_required',
    'messaging_token_expired',
    'messaging_timeout',
    'cdn_purge_failed',
  ],
  503: [
    'service_unavailable',
    'database_not_migrated',
    'dependency_unavailable',
    'query_timeout',
    'temporarily_unavailable',
  ],
}

function appThrowing(error: unknown): Hono {
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.get('/', () => {
    throw error
  })
  return app
}

describe('the error contract', () => {
  it('the brand is the global symbol `kiln.error`', () => {
    expect(isKilnError({ [Symbol.for('kiln.error')]: true, code: 'forbidden' })).toBe(true)
    expect(Object.getOwnPropertySymbols(Object.getPrototypeOf(new ForbiddenError('x')))).toEqual([])
    const brand = Object.getOwnPropertySymbols(
      Object.getPrototypeOf(Object.getPrototypeOf(new ForbiddenError('x'))),
    )
    expect(brand.map((symbol) => Symbol.keyFor(symbol))).toEqual(['kiln.error'])
  })

  it('every code keeps its status', () => {
    const byStatus: Record<number, string[]> = {}
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      byStatus[entry.status] = [...(byStatus[entry.status] ?? []), code]
    }
    expect(byStatus).toEqual(CODES_BY_STATUS)
  })

  it('a body carries the code beside the message, whoever threw', async () => {
    const kiln = await appThrowing(new ForbiddenError('Taken')).request('/')
    expect([kiln.status, await kiln.json()]).toEqual([403, { error: 'Taken', code: 'forbidden' }])
    const bare = await appThrowing(new HTTPException(404)).request('/')
    expect([bare.status, await bare.json()]).toEqual([
      404,
      { error: 'Not Found', code: 'not_found' },
    ])
    const odd = await appThrowing(new HTTPException(418)).request('/')
    expect(await odd.json()).toEqual({ error: 'Error', code: 'bad_request' })
    const crash = await appThrowing(new Error('secret detail')).request('/')
    expect(await crash.json()).toEqual({ error: 'Internal Server Error', code: 'internal_error' })
  })

  it('the OpenAPI error schemas and the typed client carry it', () => {
    expect(errorSchemas.Error?.required).toEqual(['error', 'code'])
    expect(errorSchemas.ValidationError?.required).toEqual(['error', 'code', 'errors'])
    const client = generateApiClient({
      openapi: '3.0.3',
      info: { title: 'T', version: '1' },
      paths: {},
      components: { schemas: errorSchemas },
    })
    expect(client).toMatch(/export type ApiError = \{[^}]*error: string[^}]*code: string/)
  })
})
