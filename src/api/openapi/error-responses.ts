import { type KilnErrorCode, statusOf } from '../../core/error-catalogue.ts'
import type { JsonSchema } from './types.ts'

/*
 * The error answers of the API as the OpenAPI document describes them: their schemas, the
 * shared responses by status, and the references operations make to them.
 */

/** The body's `code`: the error catalogue's, the field a client branches on. */
const CODE: JsonSchema = {
  type: 'string',
  description:
    'What went wrong, as a stable code from the error catalogue: branch on it, not on `error`.',
  example: 'not_found',
}

/** `Error` and `ValidationError`, the bodies of every error answer. */
export const errorSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['error', 'code'],
    properties: { error: { type: 'string' }, code: CODE },
  },
  ValidationError: {
    type: 'object',
    required: ['error', 'code', 'errors'],
    properties: {
      error: { type: 'string', example: 'Validation failed' },
      code: { ...CODE, example: 'validation_failed' },
      errors: {
        type: 'object',
        description: 'Messages per field.',
        additionalProperties: { type: 'array', items: { type: 'string' } },
      },
    },
  },
}

export const errorResponse = (description: string, schema = 'Error') => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
})

/**
 * The answers an API route may fail with, by code: the catalogue (`ERROR_CATALOGUE`) gives each
 * its status; the description says when this API answers it.
 */
const API_ERRORS = {
  bad_request: 'Malformed JSON body.',
  unauthenticated: 'Missing, unknown, revoked or expired API key.',
  forbidden: 'The API key lacks a scope this operation needs.',
  not_found: 'No record with this identifier.',
  conflict: 'The record is still referenced by other records.',
  payload_too_large: 'The body is larger than the API accepts.',
  unsupported_media_type: 'The body is not application/json.',
  validation_failed: 'The request failed validation.',
  precondition_failed:
    "The `If-Match` header names none of the record's current ETags: it changed since it was read; nothing was changed.",
  too_many_requests: 'Too many requests; retry after the `Retry-After` seconds.',
  query_timeout:
    'On PostgreSQL: the query ran past its time budget, or waited too long for its turn or a connection; narrow the filters or the page, or retry later.',
} as const satisfies Partial<Record<KilnErrorCode, string>>

/** A code an API operation documents among its error responses. */
export type ApiErrorCode = keyof typeof API_ERRORS

/**
 * What an operation that reads a JSON body can answer besides its own errors: a malformed body,
 * one past the body limit, one that is not JSON, one that fails validation.
 */
export const BODY_ERRORS = [
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
] as const satisfies readonly ApiErrorCode[]

/** The shared error responses, by status, as `components.responses`. */
export const sharedResponses: Record<string, unknown> = Object.fromEntries(
  Object.entries(API_ERRORS).map(([code, description]) => [
    String(statusOf(code as ApiErrorCode)),
    errorResponse(description, code === 'validation_failed' ? 'ValidationError' : 'Error'),
  ]),
)

/**
 * An operation's error responses, by the codes it can answer with:
 * `errorRefs('unauthenticated', 'too_many_requests')` → `{ 401: { $ref }, 429: { $ref } }`.
 */
export function errorRefs(...codes: ApiErrorCode[]): Record<string, { $ref: string }> {
  return Object.fromEntries(
    codes.map((code) => {
      const status = String(statusOf(code))
      return [status, { $ref: `#/components/responses/${status}` }]
    }),
  )
}
