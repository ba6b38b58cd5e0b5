import { randomBytes } from 'node:crypto'
import { type Context, Hono } from 'hono'
import { bodyLimit } from '../http/body-limit.ts'
import { constantTimeEqual } from '../http/constant-time.ts'
import {
  type LimiterDefinition,
  perIpAndSubject,
  type RateLimiters,
} from '../http/rate-limiters.ts'
import { securityHeaderValues } from '../http/security-headers.ts'
import { limitRequest } from '../http/throttle.ts'
import { type LoginPageProps, renderLoginPage } from './login-page.ts'
import { safeReturnTo } from './return-to.ts'
import { readCookie, type SessionStore } from './session-store.ts'

/** The app's credential check: the user's id, or undefined when the email or password is wrong. */
export type VerifyCredentials = (credentials: {
  email: string
  password: string
}) => Promise<string | undefined>

export interface LoginRoutesOptions {
  sessions: SessionStore
  /**
   * Looks the user up and checks the password. Use `createPasswordHasher().verify(password,
   * user?.passwordHash)`: it checks a dummy hash for unknown emails, so they take as long as
   * known ones.
   */
  verifyCredentials: VerifyCredentials
  /** kiln's rate limiters: `login-ip` counts every attempt, `login-email-ip` failed ones. */
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
}

/** 30 sign-in attempts a minute from one address, whatever the email. */
export const LOGIN_IP_LIMIT: LimiterDefinition = { points: 30, durationSeconds: 60 }
/** 10 failed sign-ins of one email from one address per 15 minutes: strangers cannot lock a user out. */
export const LOGIN_EMAIL_IP_LIMIT: LimiterDefinition = (request) =>
  perIpAndSubject(request, 10, 900)

const CSRF_COOKIE = 'kiln_login_csrf'
const PAGE_HEADERS = securityHeaderValues({ csp: { 'form-action': "'self'" } })

/**
 * `GET /login?return_to=…`, `POST /login` and `POST /logout` for apps whose users sign in
 * with an email and a password. Login CSRF is a double-submit token (a cookie scoped to the
 * login path and a hidden field); `return_to` is followed only when it is a path on this
 * site. Each POST reads at most `maxBodyBytes`.
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
  const secure = sessions.secure ? '; Secure' : ''
  const limit = bodyLimit({ maxBytes: options.maxBodyBytes ?? 16 * 1024 })
  limiters.define('login-ip', LOGIN_IP_LIMIT)
  limiters.define('login-email-ip', LOGIN_EMAIL_IP_LIMIT)

  const page = (
    c: Context,
    props: Omit<LoginPageProps, 'action' | 'appName' | 'csrfToken'>,
    status = 200,
  ) => {
    const csrfToken = randomBytes(24).toString('base64url')
    c.header(
      'Set-Cookie',
      `${CSRF_COOKIE}=${csrfToken}; Path=${loginPath}; HttpOnly; SameSite=Strict; Max-Age=3600${secure}`,
      { append: true },
    )
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
    const fail = (error: string, status: number, retryAfter?: number) => {
      if (retryAfter !== undefined) c.header('Retry-After', String(Math.max(retryAfter, 1)))
      return page(c, { returnTo, email, error }, status)
    }
    const byIp = await limiters.consume('login-ip', limitRequest(c, limiters))
    if (!byIp.allowed)
      return fail('Too many attempts. Wait a minute and try again.', 429, byIp.resetSeconds)
    const cookieToken = readCookie(c.req.header('cookie'), CSRF_COOKIE) ?? ''
    if (!constantTimeEqual(field('csrf_token'), cookieToken)) {
      return fail('Your form expired. Please try again.', 400)
    }
    const attempt = limitRequest(c, limiters, email)
    const failures = await limiters.peek('login-email-ip', attempt)
    if (failures.remaining === 0) {
      return fail(
        'Too many attempts. Wait a few minutes and try again.',
        429,
        failures.resetSeconds,
      )
    }
    const userId = await verifyCredentials({ email, password: field('password') })
    if (userId === undefined) {
      await limiters.consume('login-email-ip', attempt)
      return fail('Invalid email or password.', 401)
    }
    await limiters.reset('login-email-ip', attempt)
    const { cookie } = await sessions.create(userId)
    c.header('Set-Cookie', cookie, { append: true })
    c.header(
      'Set-Cookie',
      `${CSRF_COOKIE}=; Path=${loginPath}; HttpOnly; SameSite=Strict; Max-Age=0${secure}`,
      { append: true },
    )
    return c.redirect(returnTo, 303)
  })

  app.post(logoutPath, limit, async function logout(c) {
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
