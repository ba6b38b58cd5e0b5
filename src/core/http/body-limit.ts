import type { Context, MiddlewareHandler } from 'hono'
import { PayloadTooLargeError, RequestAbortedError } from '../errors.ts'

/** 1 MiB: the default for JSON bodies and forms. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/** Options of `bodyLimit`. */
export interface BodyLimitOptions {
  /** Largest accepted body in bytes; larger ones answer 413. Default 1 MiB. */
  maxBytes?: number
}

/**
 * Reads a request body, refusing more than `maxBytes` with `PayloadTooLargeError` (413):
 * at once when `Content-Length` says so, else as soon as the bytes streamed so far pass the
 * limit. Nothing past the limit is read, so a chunked upload cannot make the app buffer it.
 * A client that closes the connection before its body arrived gets `RequestAbortedError`
 * (400, logged at debug): the app did nothing wrong.
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  try {
    return await readWithin(request, maxBytes)
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw error
    // Reading the client's own stream fails only when the client went away mid-body.
    throw new RequestAbortedError({ cause: error })
  }
}

async function readWithin(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    const length = Number(declared)
    if (!Number.isFinite(length) || length < 0 || length > maxBytes) {
      throw new PayloadTooLargeError()
    }
    // Node's HTTP parser stops at the declared length, so the body fits: read it in one go
    // (the Node adapter does that straight from the socket, without a web stream).
    const bytes = new Uint8Array(await request.arrayBuffer())
    if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError()
    return bytes
  }
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      // Stop reading, but do not cancel: on Node, cancelling the body destroys the socket, and
      // the client would get a reset instead of the 413. The server drains or closes the rest.
      reader.releaseLock()
      throw new PayloadTooLargeError()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/** The limit in bytes (`DEFAULT_BODY_LIMIT` when not given); a TypeError when it is not one. */
export function checkBodyLimit(maxBytes: number | undefined, owner: string): number {
  const limit = maxBytes ?? DEFAULT_BODY_LIMIT
  if (!Number.isInteger(limit) || limit < 0) {
    throw new TypeError(`${owner}: maxBytes must be a whole number of bytes`)
  }
  return limit
}

/**
 * The body limit of every kiln route that reads a body: reads it through `readBodyBytes`
 * (413 at the limit, while streaming) and hands the handler a request with those bytes, so
 * `c.req.json()`, `parseBody()` and `text()` never see more than `maxBytes`.
 * @example
 * ```ts
 * app.use('/uploads/*', bodyLimit({ maxBytes: 10 * 1024 * 1024 }))
 * ```
 */
export function bodyLimit(options: BodyLimitOptions = {}): MiddlewareHandler {
  const maxBytes = checkBodyLimit(options.maxBytes, 'bodyLimit')
  return async function bodyLimitMiddleware(c, next) {
    await limitBody(c, maxBytes)
    await next()
  }
}

/**
 * What `bodyLimit` does before the handler: reads the body (413 past `maxBytes`) and gives
 * the handler a request with those bytes.
 */
export async function limitBody(c: Context, maxBytes: number): Promise<void> {
  const raw = c.req.raw
  // GET and HEAD carry no body; asking for `raw.body` would make the Node adapter build a
  // full web Request (streams, abort signal) for nothing.
  if (raw.method !== 'GET' && raw.method !== 'HEAD' && raw.body) {
    const bytes = await readBodyBytes(raw, maxBytes)
    c.req.raw = new Request(raw, { body: bytes as Uint8Array<ArrayBuffer> })
  }
}
