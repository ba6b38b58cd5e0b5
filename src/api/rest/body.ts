import type { z } from 'zod'
import { BadRequestError, UnsupportedMediaTypeError, ValidationError } from '../../core/errors.ts'
import { DEFAULT_BODY_LIMIT, readBodyBytes } from '../../core/http/body-limit.ts'
import { BODY_FIELD, validate } from './validation.ts'

/** Options of `parseJsonBody`. */
export interface JsonBodyOptions {
  /** Largest accepted body in bytes (default 1 MiB); larger ones answer 413. */
  maxBytes?: number
}

/**
 * Reads a request's JSON body and validates it with `schema`:
 * 415 unless `Content-Type` is `application/json` (or a `+json` type), 413 over `maxBytes`,
 * 400 for malformed JSON, 422 for a body the schema rejects or any string holding a NUL
 * character (no database stores those reliably).
 */
export async function parseJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: JsonBodyOptions = {},
): Promise<z.output<S>> {
  return validate(schema, await readJson(request, options))
}

/** The JSON value of a request body, with the content-type, size and syntax checks above. */
export async function readJson(request: Request, options: JsonBodyOptions = {}): Promise<unknown> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new UnsupportedMediaTypeError('Content-Type must be application/json')
  }
  // Stops reading at the limit, also for a chunked body that declares no length.
  const bytes = await readBodyBytes(request, options.maxBytes ?? DEFAULT_BODY_LIMIT)
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw new BadRequestError('Malformed JSON body')
  }
  const nul = findNul(value)
  if (nul !== undefined) {
    throw new ValidationError({ [nul || BODY_FIELD]: ['must not contain NUL characters'] })
  }
  return value
}

/** True for `application/json` and `application/<x>+json`, with or without parameters. */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false
  const type = header.split(';', 1)[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/**
 * The top-level field whose value holds a string (or key) containing U+0000, `''` for the body
 * itself, undefined when there is none. Iterative, since bodies may nest deep.
 */
function findNul(root: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[root, '']]
  while (stack.length > 0) {
    const [value, field] = stack.pop()!
    if (typeof value === 'string') {
      if (value.includes('\0')) return field
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const owner = field || (Array.isArray(root) ? '' : key)
        if (key.includes('\0')) return owner
        stack.push([child, owner])
      }
    }
  }
  return undefined
}
