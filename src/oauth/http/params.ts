import type { Context } from 'hono'
import { OAuthError } from '../errors.ts'

/**
 * Reads an `application/x-www-form-urlencoded` body. Anything else is `invalid_request`.
 * @see RFC 6749 §3.2
 */
export async function readForm(c: Context): Promise<URLSearchParams> {
  const type = c.req.header('content-type') ?? ''
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded')
  }
  return new URLSearchParams(await c.req.text())
}

/**
 * One parameter that may appear at most once; a repeated one is `invalid_request`.
 * Empty values count as absent. @see RFC 6749 §3.1, §3.2
 */
export function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name)
  if (values.length > 1) throw new OAuthError('invalid_request', `${name} must not be repeated`)
  const value = values[0]
  return value === undefined || value === '' ? undefined : value
}

export function required(params: URLSearchParams, name: string): string {
  const value = single(params, name)
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`)
  return value
}

/** The `resource` parameters (RFC 8707 allows repeats; kiln serves one resource). */
export function resources(params: URLSearchParams): string[] {
  return params.getAll('resource')
}
