import type { JsonSchema } from './types.ts'

/*
 * The error answers of the API as the OpenAPI document describes them: their schemas, the
 * shared responses by status, and the references operations make to them.
 */

/** `Error` and `ValidationError`, the bodies of every error answer. */
export const errorSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'string' } },
  },
  ValidationError: {
    type: 'object',
    required: ['error', 'errors'],
    properties: {
      error: { type: 'string', example: 'Validation failed' },
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

export const sharedResponses: Record<string, unknown> = {
  '400': errorResponse('Malformed JSON body.'),
  '401': errorResponse('Missing, unknown, revoked or expired API key.'),
  '403': errorResponse('The API key lacks a scope this operation needs.'),
  '404': errorResponse('No record with this identifier.'),
  '409': errorResponse('The record is still referenced by other records.'),
  '415': errorResponse('The body is not application/json.'),
  '422': errorResponse('The request failed validation.', 'ValidationError'),
  '429': errorResponse('Too many requests; retry after the `Retry-After` seconds.'),
}

/** An operation's error responses: `errorRefs('401', '429')` → `{ 401: { $ref }, 429: { $ref } }`. */
export function errorRefs(...codes: string[]): Record<string, { $ref: string }> {
  return Object.fromEntries(codes.map((code) => [code, { $ref: `#/components/responses/${code}` }]))
}
