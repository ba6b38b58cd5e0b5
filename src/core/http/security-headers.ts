import type { MiddlewareHandler } from 'hono'
import { editResponseHeaders } from './response-headers.ts'

/** A Content-Security-Policy as directives: `{ 'img-src': "'self' data:" }`. */
export type CspDirectives = Record<string, string>

/**
 * The policy of a server-rendered page with no script and no outside resource. No
 * `form-action` by default: browsers apply it to the redirect after a POST, which for
 * consent goes to the client's own redirect URI.
 */
export const PAGE_CSP: Readonly<CspDirectives> = {
  'default-src': "'none'",
  'style-src': "'unsafe-inline'",
  'img-src': 'data:',
  'base-uri': "'none'",
  'frame-ancestors': "'none'",
}

/**
 * The security headers of a stored file served from the app's origin (the public disk, signed
 * links): an uploaded HTML or SVG file must not run scripts there, nor be sniffed into one.
 * Framing stays allowed: apps show their own images and PDFs.
 */
export const FILE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
}

/** Options of `securityHeaderValues`. */
export interface SecurityHeadersOptions {
  /** Directives added to (or replacing those of) `PAGE_CSP`. */
  csp?: CspDirectives
  /** `Cache-Control`; default `no-store` (pages carry CSRF tokens and codes). */
  cacheControl?: string | false
}

/**
 * The headers of every HTML page kiln or the app renders: no framing (clickjacking), no
 * sniffing, no referrer (URLs carry codes), never cached. The one set of security headers.
 */
export function securityHeaderValues(
  options: SecurityHeadersOptions = {},
): Readonly<Record<string, string>> {
  const csp = { ...PAGE_CSP, ...options.csp }
  const headers: Record<string, string> = {
    'Content-Security-Policy': Object.entries(csp)
      .map(([directive, value]) => `${directive} ${value}`)
      .join('; '),
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  }
  const cache = options.cacheControl ?? 'no-store'
  if (cache !== false) headers['Cache-Control'] = cache
  return headers
}

/**
 * Middleware setting `securityHeaderValues(options)` on every response of its routes.
 * @example
 * ```ts
 * app.use('/account/*', securityHeaders())
 * ```
 */
export function securityHeaders(options: SecurityHeadersOptions = {}): MiddlewareHandler {
  const values = Object.entries(securityHeaderValues(options))
  return async function securityHeadersMiddleware(c, next) {
    await next()
    for (const [header, value] of values) {
      if (!c.res.headers.has(header)) c.res.headers.set(header, value)
    }
  }
}

/**
 * The header every answer of kiln carries: a browser never sniffs a JSON answer (which may
 * echo what a client sent) into HTML or script. JSON built by `plainResponses` and
 * `errorHandler` writes it at once; `noSniff()` adds it to the answers of a group of routes.
 */
export const NO_SNIFF = { name: 'X-Content-Type-Options', value: 'nosniff' } as const

/**
 * Middleware adding `X-Content-Type-Options: nosniff` to every answer of its routes that lacks it.
 * @example
 * ```ts
 * app.use('*', noSniff(), requestLog({ logger }))
 * ```
 */
export function noSniff(): MiddlewareHandler {
  return async function noSniffMiddleware(c, next) {
    await next()
    if (!c.res.headers.has(NO_SNIFF.name)) {
      editResponseHeaders(c, (headers) => headers.set(NO_SNIFF.name, NO_SNIFF.value))
    }
  }
}
