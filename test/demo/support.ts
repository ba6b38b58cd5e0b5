import type { Hono } from 'hono'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import {
  createDemoContext,
  type DemoContext,
  type DemoContextOptions,
} from '../../examples/demo/src/context.ts'
import type { DemoAppOptions } from '../../examples/demo/src/features/index.ts'
import { silentLogger } from '../../src/core/index.ts'

export interface DemoUnderTest {
  ctx: DemoContext
  app: Hono
  close(): Promise<void>
}

/** The demo app in process, on an in-memory PGlite unless told otherwise. */
export async function startDemo(
  options: DemoContextOptions = {},
  appOptions: DemoAppOptions = {},
): Promise<DemoUnderTest> {
  const ctx = await createDemoContext({
    databaseUrl: 'pglite:',
    logger: silentLogger(),
    ...options,
    env: { DEMO_EMAIL: 'demo@example.com', DEMO_PASSWORD: 'correct horse battery', ...options.env },
  })
  const app = await createDemoApp(ctx, appOptions)
  return { ctx, app, close: () => ctx.close() }
}

/** Collects Set-Cookie values into a Cookie header, as a browser would. */
export class CookieJar {
  readonly #cookies = new Map<string, string>()

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair?.indexOf('=') ?? -1
      if (!pair || eq < 0) continue
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (value === '' || /max-age=0/i.test(line)) this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }
}

export function hiddenInput(html: string, name: string): string {
  const match = html.match(new RegExp(`name="${name}" value="([^"]*)"`))
  if (!match?.[1]) throw new Error(`no hidden input ${name}`)
  return match[1]
}

/** Signs in through the real login form and returns the cookie jar holding the session. */
export async function signIn(
  app: Hono,
  email: string,
  password: string,
  returnTo = '/',
): Promise<CookieJar> {
  const jar = new CookieJar()
  const page = await app.request(`/login?return_to=${encodeURIComponent(returnTo)}`)
  jar.store(page)
  const csrf = hiddenInput(await page.text(), 'csrf_token')
  const response = await app.request('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({
      email,
      password,
      csrf_token: csrf,
      return_to: returnTo,
    }).toString(),
  })
  if (response.status !== 303) throw new Error(`login failed with ${response.status}`)
  jar.store(response)
  return jar
}
