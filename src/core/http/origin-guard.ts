import type { MiddlewareHandler } from 'hono'
import { ForbiddenError } from '../errors.ts'

/** Options of `originPolicy`. */
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

/** The origins and hosts a request may come from, as `originPolicy` resolves them. */
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
 * Why a request is refused, or undefined when its origin and `Host` are allowed. A request
 * without `Origin` (a native client, curl) passes unless a browser's `Sec-Fetch-Site` says a
 * form or script of another origin sent it (checked on state-changing methods: following a
 * link from another site stays possible). A request with an `Origin` must name an allowed
 * origin; `Origin: null` (an opaque or no-referrer page) passes only when `Sec-Fetch-Site`
 * says `same-origin`. `Host` must be an allowed host when present: a page on a rebinding
 * domain reaches the server with its own name in `Host`.
 */
export function originRefusal(request: Request, policy: OriginPolicy): string | undefined {
  const origin = request.headers.get('origin')
  const site = request.headers.get('sec-fetch-site')
  if (origin === null || origin === 'null') {
    const refused =
      origin === 'null'
        ? site !== 'same-origin'
        : changesState(request.method) && site !== null && !SELF_INITIATED.has(site)
    if (refused) return 'Origin not allowed'
  } else if (!policy.origins.has(origin.toLowerCase())) {
    return 'Origin not allowed'
  }
  const host = request.headers.get('host')
  if (policy.hosts && host !== null && !policy.hosts.has(host.toLowerCase())) {
    return 'Host not allowed'
  }
  return undefined
}

/** `Sec-Fetch-Site` values of a request made by the page's own origin or by the person (a typed URL, a bookmark). */
const SELF_INITIATED = new Set(['same-origin', 'none'])

function changesState(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS'
}

/**
 * The allowed origins of a form's posts, per request: APP_URL's (and `origins`) when the app
 * gives it; otherwise those of the name the request reached, over http and https (a proxy
 * ending TLS hides the scheme), plus `origins`. No `Host` check: a login form is worth nothing
 * to a rebinding page, whose cookies are its own.
 */
export function formOriginPolicy(options: {
  appUrl?: string | undefined
  origins?: readonly string[] | undefined
  owner: string
}): (request: Request) => OriginPolicy {
  const extra = (options.origins ?? []).map((origin) => {
    try {
      return new URL(origin).origin.toLowerCase()
    } catch {
      throw new TypeError(`${options.owner}: ${JSON.stringify(origin)} is not an origin URL`)
    }
  })
  if (options.appUrl !== undefined) {
    const fixed = originPolicy({ appUrl: options.appUrl, origins: extra, hosts: false })
    return () => fixed
  }
  return function ownHostPolicy(request) {
    const host = new URL(request.url).host.toLowerCase()
    return { origins: new Set([`http://${host}`, `https://${host}`, ...extra]), hosts: undefined }
  }
}

/**
 * Refuses requests from other origins with 403: DNS-rebinding protection, which the MCP
 * Streamable HTTP transport requires ("servers MUST validate the Origin header"), and a guard
 * for the OAuth endpoints. The allow-list comes from APP_URL.
 * @example
 * ```ts
 * app.use('/oauth/*', originGuard({ appUrl: config.appUrl, origins: ['https://admin.example'] }))
 * ```
 */
export function originGuard(options: OriginGuardOptions): MiddlewareHandler {
  const policy = originPolicy(options)
  return async function originGuardMiddleware(c, next) {
    const refusal = originRefusal(c.req.raw, policy)
    if (refusal) throw new ForbiddenError(refusal)
    await next()
  }
}
