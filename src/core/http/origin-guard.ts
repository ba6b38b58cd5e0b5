import type { MiddlewareHandler } from 'hono'
import { ForbiddenError } from '../errors.ts'

export interface OriginGuardOptions {
  /** The app's public URL (`APP_URL`): its origin and host are allowed. */
  appUrl: string
  /** More allowed origins, e.g. `https://admin.example.com`. */
  origins?: readonly string[]
  /**
   * More allowed `Host` values (`host` or `host:port`), e.g. the name a proxy forwards.
   * `false` skips the Host check (a proxy that rewrites Host makes it meaningless).
   */
  hosts?: readonly string[] | false
}

export interface OriginPolicy {
  origins: ReadonlySet<string>
  hosts: ReadonlySet<string> | undefined
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]']

/**
 * The allow-lists of `originGuard`. When APP_URL is a loopback address, its loopback aliases
 * on the same port are allowed too (`localhost:3000` and `127.0.0.1:3000` are one server).
 */
export function originPolicy(options: OriginGuardOptions): OriginPolicy {
  let app: URL
  try {
    app = new URL(options.appUrl)
  } catch {
    throw new TypeError('originGuard: appUrl must be an absolute URL (set APP_URL)')
  }
  const hosts = new Set([app.host.toLowerCase()])
  const origins = new Set([app.origin.toLowerCase()])
  if (LOOPBACK.includes(app.hostname)) {
    for (const name of LOOPBACK) {
      const host = app.port ? `${name}:${app.port}` : name
      hosts.add(host)
      origins.add(`${app.protocol}//${host}`)
    }
  }
  for (const origin of options.origins ?? []) {
    try {
      origins.add(new URL(origin).origin.toLowerCase())
    } catch {
      throw new TypeError(`originGuard: ${JSON.stringify(origin)} is not an origin URL`)
    }
  }
  if (options.hosts === false) return { origins, hosts: undefined }
  for (const host of options.hosts ?? []) hosts.add(host.toLowerCase())
  return { origins, hosts }
}

/**
 * Why a request is refused, or undefined when its `Origin` and `Host` are allowed. A request
 * without `Origin` (a native client, curl) passes; one with an `Origin` (a browser, including
 * `null`) must name an allowed origin. `Host` must be an allowed host when present: a page on
 * a rebinding domain reaches the server with its own name in `Host`.
 */
export function originRefusal(request: Request, policy: OriginPolicy): string | undefined {
  const origin = request.headers.get('origin')
  if (origin !== null && !policy.origins.has(origin.toLowerCase())) return 'Origin not allowed'
  const host = request.headers.get('host')
  if (policy.hosts && host !== null && !policy.hosts.has(host.toLowerCase())) {
    return 'Host not allowed'
  }
  return undefined
}

/**
 * Refuses requests from other origins with 403: DNS-rebinding protection, which the MCP
 * Streamable HTTP transport requires ("servers MUST validate the Origin header"), and a guard
 * for the OAuth endpoints. The allow-list comes from APP_URL.
 */
export function originGuard(options: OriginGuardOptions): MiddlewareHandler {
  const policy = originPolicy(options)
  return async function originGuardMiddleware(c, next) {
    const refusal = originRefusal(c.req.raw, policy)
    if (refusal) throw new ForbiddenError(refusal)
    await next()
  }
}
