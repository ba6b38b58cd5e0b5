import { randomBytes } from 'node:crypto'
import { type Context, Hono } from 'hono'
import {
  BadRequestError,
  ForbiddenError,
  type KilnError,
  TooManyRequestsError,
  UnauthenticatedError,
} from '../core/errors.ts'
import { bodyLimit } from '../core/http/body-limit.ts'
import { constantTimeEqual } from '../core/http/constant-time.ts'
import { formOriginPolicy, originRefusal } from '../core/http/origin-guard.ts'
import {
  type LimiterDefinition,
  type LimitRequest,
  perIpAndSubject,
  type RateLimiters,
} from '../core/http/rate-limiters.ts'
import { safeReturnTo } from '../core/http/return-to.ts'
import { securityHeaderValues } from '../core/http/security-headers.ts'
import { limitRequest } from '../core/http/throttle.ts'
import { keyDigest } from '../core/kv/key-digest.ts'
import type { Logger } from '../core/logger.ts'
import { type LoginPageProps, renderLoginPage } from './login-page.ts'
import { readCookie, type SessionStore } from './session-store.ts'

/** The app's credential check: the user's id, or undefined when the email or password is wrong. */
export type VerifyCredentials = (credentials: {
  email: string
  password: string
}) => Promise<string | undefined>

/** Options of `loginRoutes`. */
export interface LoginRoutesOptions {
  sessions: SessionStore
  /**
   * Looks the user up and checks the password. Use `createPasswordHasher().verify(password,
   * user?.passwordHash)`: it checks a dummy hash for unknown emails, so they take as long as
   * known ones.
   */
  verifyCredentials: VerifyCredentials
  /**
   * kiln's rate limiters: `login-ip` counts every attempt, `login-email-ip` failed ones
   * (each attempt is counted before the password is checked, and a success forgets them).
   */
  limiters: RateLimiters
  /** Default `/login`; the OAuth server's `loginPath` must match. */
  loginPath?: string
  /** Default `/logout`. */
  logoutPath?: string
  appName?: string
  /** Your own page (same props); kiln's plain page otherwise. */
  renderPage?: (props: LoginPageProps) => string
  /** Largest accepted form in bytes; default 16 KiB. */
  maxBodyBytes?: number
  /**
   * `APP_URL`: a form posted with another `Origin` (or, without one, a `Sec-Fetch-Site` other
   * than `same-origin`) is refused with 403. Without it, the origin of the name the request
   * reached (its `Host`, over http or https) is the allowed one.
   */
  appUrl?: string
  /** More origins whose pages may post the login form, e.g. `https://www.example.com`. */
  allowedOrigins?: readonly string[]
  /**
   * Where failed and refused logins are logged, at info: the reason, the client address and
   * a digest of the email (what was typed there may be a password), never the password.
   */
  logger?: Logger
}

/** 30 sign-in attempts a minute from one address, whatever the email. */
export const LOGIN_IP_LIMIT: LimiterDefinition = { points: 30, durationSeconds: 60 }
/** 10 failed sign-ins of one email from one address per 15 minutes: strangers cannot lock a user out. */
export const LOGIN_EMAIL_IP_LIMIT: LimiterDefinition = (request) =>
  perIpAndSubject(request, 10, 900)

/**
 * The double-submit cookie. Over https it is a `__Host-` cookie: a sibling subdomain or
 * another port cannot plant it (such a cookie must be `Secure`, for `/`, set by this host).
 * Plain http (development on localhost) has no such guard: the `Origin` check stops there.
 */
const CSRF_COOKIE = 'kiln_login_csrf'
const HOST_CSRF_COOKIE = '__Host-kiln_login_csrf'
const PAGE_HEADERS = securityHeaderValues({ csp: { 'form-action': "'self'" } })

/**
 * `GET /login?return_to=…`, `POST /login` and `POST /logout` for apps whose users sign in
 * with an email and a password. Login CSRF: a form posted from another origin is refused
 * (`Origin`, `Sec-Fetch-Site`), and the form carries a double-submit token (a hidden field
 * and a cookie, `__Host-` over https); `return_to` is followed only when it is a path on
 * this site. Each POST reads at most `maxBodyBytes`.
 * @example
 * ```ts
 * app.route('/', loginRoutes({ sessions, limiters, verifyCredentials: accounts.verifyCredentials }))
 * ```
 */
export function loginRoutes(options: LoginRoutesOptions): Hono {
  const { sessions, verifyCredentials, limiters } = options
  if (!sessions || typeof verifyCredentials !== 'function' || !limiters) {
    throw new TypeError('loginRoutes: `sessions`, `verifyCredentials` and `limiters` are required')
  }
  const loginPath = options.loginPath ?? '/login'
  const logoutPath = options.logoutPath ?? '/logout'
  const render = options.renderPage ?? renderLoginPage
  const appName = options.appName ?? 'kiln'
  const csrfCookie = loginCsrfCookie(sessions.secure, loginPath)
  const policyFor = formOriginPolicy({
    appUrl: options.appUrl,
    origins: options.allowedOrigins,
    owner: 'loginRoutes',
  })
  const crossSite = (c: Context) => originRefusal(c.req.raw, policyFor(c.req.raw)) !== undefined
  const limit = bodyLimit({ maxBytes: options.maxBodyBytes ?? 16 * 1024 })
  const refused = (reason: string, request: LimitRequest) =>
    options.logger?.info(
      { reason, ip: request.ip, email: keyDigest(request.subject ?? '') },
      'login refused',
    )
  limiters.define('login-ip', LOGIN_IP_LIMIT)
  limiters.define('login-email-ip', LOGIN_EMAIL_IP_LIMIT)

  const page = (
    c: Context,
    props: Omit<LoginPageProps, 'action' | 'appName' | 'csrfToken'>,
    status = 200,
  ) => {
    const csrfToken = randomBytes(24).toString('base64url')
    c.header('Set-Cookie', csrfCookie.set(csrfToken), { append: true })
    return c.html(
      render({ ...props, action: loginPath, appName, csrfToken }),
      status as 200,
      PAGE_HEADERS,
    )
  }

  const app = new Hono()
  app.get(loginPath, function loginPage(c) {
    return page(c, { returnTo: safeReturnTo(c.req.query('return_to')) ?? '/', email: '' })
  })

  app.post(loginPath, limit, async function login(c) {
    const form = await c.req.parseBody()
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '')
    const email = field('email').trim().toLowerCase().slice(0, 320)
    const returnTo = safeReturnTo(field('return_to')) ?? '/'
    // The form again, with the error's message, status and headers (`Retry-After`).
    const fail = (error: KilnError) => {
      for (const [name, value] of Object.entries(error.headers())) c.header(name, value)
      return page(c, { returnTo, email, error: error.message }, error.status)
    }
    const attempt = limitRequest(c, limiters, email)
    const cookieToken = readCookie(c.req.header('cookie'), csrfCookie.name) ?? ''
    const checks = { limiters, verifyCredentials, refused, crossSite: crossSite(c) }
    const submitted = { email, password: field('password'), csrfToken: field('csrf_token') }
    const userId = await signIn(checks, attempt, submitted, cookieToken)
    if (typeof userId !== 'string') return fail(userId)
    await limiters.reset('login-email-ip', attempt)
    const { cookie } = await sessions.create(userId)
    c.header('Set-Cookie', cookie, { append: true })
    c.header('Set-Cookie', csrfCookie.set('', 0), { append: true })
    return c.redirect(returnTo, 303)
  })

  app.post(logoutPath, limit, async function logout(c) {
    if (crossSite(c)) return c.redirect('/', 303)
    const session = await sessions.current(c.req.raw)
    const form = await c.req.parseBody()
    const token = typeof form.csrf_token === 'string' ? form.csrf_token : ''
    if (session && constantTimeEqual(token, session.csrfToken)) {
      c.header('Set-Cookie', await sessions.destroy(session))
    }
    return c.redirect('/', 303)
  })

  return app
}

/** The double-submit cookie of the login form: `__Host-` over https, the login path's otherwise. */
function loginCsrfCookie(secure: boolean, loginPath: string) {
  const { name, path } = secure
    ? { name: HOST_CSRF_COOKIE, path: '/' }
    : { name: CSRF_COOKIE, path: loginPath }
  return {
    name,
    /** The `Set-Cookie` value that sets it (for an hour) or, with `maxAge` 0, clears it. */
    set: (token: string, maxAge = 3600) =>
      `${name}=${token}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`,
  }
}

interface SignInChecks {
  limiters: RateLimiters
  verifyCredentials: VerifyCredentials
  refused: (reason: string, request: LimitRequest) => void
  /** The form came from another origin. */
  crossSite: boolean
}

/**
 * A sign-in's checks, in order: the address's rate, the origin, the form's CSRF token, the
 * email's lockout, then the password. The user's id, or the error the form shows again.
 */
async function signIn(
  { limiters, verifyCredentials, refused, crossSite }: SignInChecks,
  attempt: LimitRequest,
  form: { email: string; password: string; csrfToken: string },
  cookieToken: string,
): Promise<string | KilnError> {
  const byIp = await limiters.consume('login-ip', attempt)
  if (!byIp.allowed) {
    refused('too many attempts from this address', attempt)
    const wait = Math.max(byIp.resetSeconds, 1)
    return new TooManyRequestsError(wait, 'Too many attempts. Wait a minute and try again.')
  }
  if (crossSite) {
    refused('posted from another origin', attempt)
    return new ForbiddenError('This form was sent from another site. Sign in on this page.')
  }
  if (!constantTimeEqual(form.csrfToken, cookieToken)) {
    return new BadRequestError('Your form expired. Please try again.')
  }
  // Counted before the check: concurrent guesses each see their own count.
  const failures = await limiters.consume('login-email-ip', attempt)
  if (!failures.allowed) {
    refused('locked out', attempt)
    const wait = Math.max(failures.resetSeconds, 1)
    return new TooManyRequestsError(wait, 'Too many attempts. Wait a few minutes and try again.')
  }
  const userId = await verifyCredentials({ email: form.email, password: form.password })
  if (userId !== undefined) return userId
  refused('wrong email or password', attempt)
  return new UnauthenticatedError('Invalid email or password.')
}
