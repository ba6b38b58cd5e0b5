import type { Context, MiddlewareHandler } from 'hono'
import { contextValue, setContextValue } from './context-value.ts'
import { editResponseHeaders } from './response-headers.ts'
import { NO_SNIFF } from './security-headers.ts'

/** Response headers as Node writes them: lower-case names, `set-cookie` as a list. */
export type PlainHeaders = Record<string, string | string[]>

/** Options of `plainResponses`. */
export interface PlainResponsesOptions {
  /** `Cache-Control` of every answer unless the handler sets its own. */
  cacheControl?: string
  /** `Vary` of every answer; what the handler adds is appended. */
  vary?: string
  /**
   * Sees every JSON answer before it is built, with the text `c.json()` serialized: may add
   * to `headers`, or return a response to send instead (a 304, say).
   */
  beforeJson?(c: Context, text: string, status: number, headers: PlainHeaders): Response | undefined
}

/**
 * What a request inside `plainResponses` will answer with, besides its body, and the two steps
 * that end the recording (`close`, `complete`) as methods rather than closures per request.
 */
class PendingHeaders {
  /** `RateLimit-Limit`, `-Remaining`, `-Reset`, from the tightest throttle. */
  rateLimit: [string, string, string] | undefined = undefined
  /** Anything else given to `c.header()`. */
  other: PlainHeaders | undefined = undefined
  /** The answer `c.json()` built. */
  written: Response | undefined = undefined

  constructor(
    readonly c: Context,
    readonly options: PlainResponsesOptions,
  ) {}

  /** Stops recording: the throttle and `hasResponseHeader` look at `c.res` again. */
  close(): void {
    setContextValue(this.c, PENDING, undefined)
  }

  /** Once the handler answered: closes, and adds the recorded headers to an answer not built by `c.json()`. */
  complete(): void {
    this.close()
    const { c, written, options } = this
    if (written !== undefined && c.res === written) return
    const headers: PlainHeaders = {}
    addPending(headers, this, options.cacheControl, options.vary)
    addMissingHeaders(c, headers)
  }
}

const PENDING = 'kiln.plainResponses'

/** The throttle's headers, in the order of their values (limit, remaining, reset seconds). */
export const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']

/**
 * Builds the JSON answers of a group of routes with their headers as a plain object.
 *
 * Why: on Node, a response whose headers are a plain object is written to the socket as is;
 * once anything calls `c.header()` or touches `c.res.headers`, Hono and the Node adapter build
 * a web `Headers` object, copy into it and out of it again, and reading a body back means
 * teeing its stream. Behind an API key and a limiter that cost more CPU than the rest of a
 * cached show request (docs/performance-archive.md, "The show path"). Inside this middleware `c.header()` and
 * `c.status()` only record, the throttle records its `RateLimit-*` headers, and `c.json()`
 * builds the response once. An answer made any other way (`c.text()`, a stream, a `Response`
 * of the handler's own) gets the recorded headers added afterwards.
 * @example
 * ```ts
 * app.use('/api/*', plainResponses({ cacheControl: 'no-store', vary: 'Authorization' }))
 * ```
 */
export function plainResponses(options: PlainResponsesOptions = {}): MiddlewareHandler {
  return async function plainResponses(c, next) {
    const answer = recordResponse(c, options)
    try {
      await next()
    } finally {
      answer.close()
    }
    answer.complete()
  }
}

/** One request's answer being recorded by `recordResponse`. */
export type RecordedResponse = Pick<PendingHeaders, 'close' | 'complete'>

/**
 * What `plainResponses` does for one request, for middleware that does more around it (kiln/api's
 * `apiGuard`): from here on `c.header()` and `c.status()` record, and `c.json()` builds the
 * answer with the recorded headers.
 */
export function recordResponse(c: Context, options: PlainResponsesOptions): RecordedResponse {
  const { cacheControl, vary, beforeJson } = options
  const pending = new PendingHeaders(c, options)
  const setHeader = c.header
  const setStatus = c.status
  let status = 200
  c.header = ((name: string, value?: string, opts?: { append?: boolean }) => {
    if (c.finalized) return setHeader(name, value, opts)
    pending.other ??= {}
    recordHeader(pending.other, name, value, opts?.append === true)
  }) as Context['header']
  c.status = ((code: number) => {
    status = code
    setStatus(code as Parameters<Context['status']>[0])
  }) as Context['status']
  c.json = ((object: unknown, arg?: number | ResponseInit, extra?: PlainHeaders) => {
    const text = JSON.stringify(object)
    const code = typeof arg === 'number' ? arg : (arg?.status ?? status)
    const headers: PlainHeaders = {
      'content-type': 'application/json',
      'x-content-type-options': NO_SNIFF.value,
    }
    addPending(headers, pending, cacheControl, vary)
    if (typeof arg === 'object' && arg.headers) {
      for (const [name, value] of new Headers(arg.headers)) {
        recordHeader(headers, name, value, false)
      }
    }
    for (const name in extra) headers[name.toLowerCase()] = extra[name] as string | string[]
    pending.written =
      beforeJson?.(c, text, code, headers) ??
      new Response(text, { status: code, headers: headers as HeadersInit })
    return pending.written
  }) as Context['json']
  setContextValue(c, PENDING, pending)
  return pending
}

/**
 * Sets the `RateLimit-*` headers of the response: recorded inside `plainResponses`, else with
 * `c.header()`. Returns whether they are on the response already (no need to add them later).
 */
export function setRateLimitHeaders(c: Context, values: [string, string, string]): boolean {
  const pending = contextValue<PendingHeaders>(c, PENDING)
  if (pending) {
    pending.rateLimit = values
    return true
  }
  RATE_LIMIT_HEADERS.forEach((name, i) => {
    c.header(name, values[i])
  })
  return false
}

/**
 * Whether the response being prepared has header `name`: from what `plainResponses` recorded,
 * else from `c.res` (which Hono creates empty when nothing answered yet).
 */
export function hasResponseHeader(c: Context, name: string): boolean {
  const pending = contextValue<PendingHeaders>(c, PENDING)
  if (!pending) return c.res.headers.has(name)
  return pending.other?.[name.toLowerCase()] !== undefined
}

/** Known names are stored as constants (fast object shapes); what handlers set comes last. */
function addPending(
  headers: PlainHeaders,
  pending: PendingHeaders,
  cacheControl: string | undefined,
  vary: string | undefined,
): void {
  if (cacheControl !== undefined) headers['cache-control'] = cacheControl
  if (vary !== undefined) headers.vary = vary
  const rateLimit = pending.rateLimit
  if (rateLimit !== undefined) {
    headers['ratelimit-limit'] = rateLimit[0]
    headers['ratelimit-remaining'] = rateLimit[1]
    headers['ratelimit-reset'] = rateLimit[2]
  }
  const other = pending.other
  if (other === undefined) return
  for (const name in other) {
    const value = other[name] as string | string[]
    headers[name] = name === 'vary' && vary !== undefined ? joinVary(vary, String(value)) : value
  }
}

/** `Vary` keeps the group's own field when a handler sets its own list. */
function joinVary(ours: string, theirs: string): string {
  return theirs.toLowerCase().includes(ours.toLowerCase()) ? theirs : `${theirs}, ${ours}`
}

function recordHeader(
  headers: PlainHeaders,
  name: string,
  value: string | undefined,
  append: boolean,
): void {
  const key = name.toLowerCase()
  const current = headers[key]
  if (value === undefined) delete headers[key]
  else if (!append || current === undefined) headers[key] = key === 'set-cookie' ? [value] : value
  else if (key === 'set-cookie') headers[key] = [...[current].flat(), value]
  else headers[key] = `${current}, ${value}`
}

/** For answers not built by `c.json()`: the recorded headers they do not already carry. */
function addMissingHeaders(c: Context, headers: PlainHeaders): void {
  editResponseHeaders(c, (target) => {
    for (const [name, value] of Object.entries(headers)) {
      if (name === 'set-cookie') for (const cookie of [value].flat()) target.append(name, cookie)
      else if (!target.has(name)) target.set(name, [value].flat().join(', '))
    }
  })
}
