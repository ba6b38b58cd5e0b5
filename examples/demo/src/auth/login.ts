import { randomBytes, timingSafeEqual } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { Hono } from 'hono'
import { html } from 'hono/html'
import type { DemoContext } from '../context.ts'
import { page, pageHeaders } from '../pages/layout.ts'
import { users } from '../schema.ts'
import { verifyPassword } from './passwords.ts'
import { readCookie } from './sessions.ts'

const LOGIN_CSRF_COOKIE = 'kiln_login_csrf'
const ATTEMPTS_PER_MINUTE = 10

/**
 * Where to go after login: only a path on this site. `//host`, `/\host` and anything with a
 * scheme would send the user elsewhere (an open redirect), so they fall back to `/`.
 */
export function safeReturnPath(value: string | undefined): string {
  if (!value?.startsWith('/') || value.startsWith('//') || value.includes('\\')) return '/'
  // Control characters (tabs, newlines) are dropped by URL parsers and can turn `/` into `//`.
  for (const char of value) if (char.charCodeAt(0) < 0x20 || char === '\u007f') return '/'
  return value
}

/** The demo's login page: `GET /login?return_to=…`, `POST /login`, `POST /logout`. */
export function loginRoutes(ctx: DemoContext): Hono {
  const app = new Hono()

  app.get('/login', (c) => {
    pageHeaders(c)
    const token = randomBytes(24).toString('base64url')
    c.header('Set-Cookie', loginCsrfCookie(token, ctx))
    return c.html(loginPage({ returnTo: safeReturnPath(c.req.query('return_to')), token }))
  })

  app.post('/login', async (c) => {
    pageHeaders(c)
    const form = await c.req.parseBody()
    const email = typeof form.email === 'string' ? form.email.trim().toLowerCase() : ''
    const password = typeof form.password === 'string' ? form.password : ''
    const returnTo = safeReturnPath(typeof form.return_to === 'string' ? form.return_to : undefined)
    const formToken = typeof form.csrf_token === 'string' ? form.csrf_token : ''
    const cookieToken = readCookie(c.req.header('cookie') ?? null, LOGIN_CSRF_COOKIE) ?? ''
    const fresh = randomBytes(24).toString('base64url')
    c.header('Set-Cookie', loginCsrfCookie(fresh, ctx))
    const fail = (message: string, status: 400 | 401 | 429) =>
      c.html(loginPage({ returnTo, token: fresh, email, error: message }), status)

    if (!sameToken(formToken, cookieToken)) return fail('Your form expired. Please try again.', 400)
    const attempts = await ctx.shared.kv.increment(`login-attempts:${email}`, 1, { ttlMs: 60_000 })
    if (attempts > ATTEMPTS_PER_MINUTE)
      return fail('Too many attempts. Wait a minute and try again.', 429)

    const [user] = await ctx.database.db.select().from(users).where(eq(users.email, email)).limit(1)
    const valid = user ? await verifyPassword(password, user.passwordHash) : false
    if (!user || !valid) return fail('Invalid email or password.', 401)

    const { cookie } = await ctx.sessions.create(String(user.id))
    c.header('Set-Cookie', cookie, { append: true })
    return c.redirect(returnTo, 303)
  })

  app.post('/logout', async (c) => {
    const session = await ctx.sessions.current(c.req.raw)
    const form = await c.req.parseBody()
    if (
      session &&
      sameToken(typeof form.csrf_token === 'string' ? form.csrf_token : '', session.csrfToken)
    ) {
      c.header('Set-Cookie', await ctx.sessions.destroy(session))
    }
    return c.redirect('/', 303)
  })

  return app
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length > 0 && x.length === y.length && timingSafeEqual(x, y)
}

function loginCsrfCookie(token: string, ctx: DemoContext): string {
  const secure = ctx.config.appUrl.startsWith('https:') ? '; Secure' : ''
  return `${LOGIN_CSRF_COOKIE}=${token}; Path=/login; HttpOnly; SameSite=Strict; Max-Age=3600${secure}`
}

function loginPage(props: { returnTo: string; token: string; email?: string; error?: string }) {
  return page(
    'Sign in',
    html`${props.error ? html`<p class="error" role="alert">${props.error}</p>` : ''}
      <form method="post" action="/login">
        <input type="hidden" name="csrf_token" value="${props.token}" />
        <input type="hidden" name="return_to" value="${props.returnTo}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${props.email ?? ''}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>`,
  )
}
