import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { eq } from 'drizzle-orm'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passwords } from '../../examples/demo/src/auth.ts'
import type { DemoContext } from '../../examples/demo/src/context.ts'
import { users } from '../../examples/demo/src/schema.ts'
import { executablePath, hasChromium } from '../support/chromium.ts'
import { type DemoServer, startDemoServer } from '../support/demo-server.ts'
import { isCI } from '../support/env.ts'

if (!hasChromium && !isCI) {
  console.warn(`kiln tests: no chromium at ${executablePath}; the login CSRF test is skipped.`)
}

const ATTACKER_EMAIL = 'attacker@example.com'
const ATTACKER_PASSWORD = 'the attacker knows this one'
const PLANTED = 'planted-csrf-token-0123456789'

/**
 * The attacker's page, on another port of the same host: same-site with the app, so it can
 * plant the login's double-submit cookie (cookies ignore ports) and post the login form with
 * the matching token and the attacker's own credentials.
 */
function attackerPage(appOrigin: string): string {
  return `<!doctype html><html><body>
<form id="f" method="post" action="${appOrigin}/login">
  <input name="email" value="${ATTACKER_EMAIL}">
  <input name="password" value="${ATTACKER_PASSWORD}">
  <input name="csrf_token" value="${PLANTED}">
  <input name="return_to" value="/">
</form>
<script>
  document.cookie = 'kiln_login_csrf=${PLANTED}; path=/login'
  document.getElementById('f').submit()
</script>
</body></html>`
}

describe.skipIf(!hasChromium && !isCI)('login CSRF from a same-site origin (Chromium)', () => {
  let browser: Browser
  let ctx: DemoContext
  let demo: DemoServer | undefined
  let attacker: Server
  let appOrigin: string
  let attackerOrigin: string
  let attackerId: number

  beforeAll(async () => {
    demo = await startDemoServer({
      MCP_TOKEN_SECRET: 'browser-test-secret-0123456789-abcdefgh',
      DEMO_EMAIL: 'demo@example.com',
      DEMO_PASSWORD: 'correct horse battery',
    })
    ;({ origin: appOrigin, ctx, browser } = demo)
    await ctx.database.db.insert(users).values({
      email: ATTACKER_EMAIL,
      name: 'Attacker',
      passwordHash: await passwords.hash(ATTACKER_PASSWORD),
    })
    const [row] = await ctx.database.db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.email, ATTACKER_EMAIL))
    attackerId = row!.id
    attacker = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(attackerPage(appOrigin))
    })
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
    attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`
  }, 120_000)

  afterAll(async () => {
    await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()))
    await demo?.close()
  })

  it('a page on another port cannot sign the victim in as the attacker', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const answers: { url: string; status: number }[] = []
    page.on('response', (response) => {
      if (response.request().method() === 'POST') {
        answers.push({ url: response.url(), status: response.status() })
      }
    })
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.goto(attackerOrigin),
    ])
    expect(answers).toEqual([{ url: `${appOrigin}/login`, status: 403 }])

    await page.goto(`${appOrigin}/`)
    const home = await page.content()
    expect(home).not.toContain(`Signed in (user ${attackerId})`)
    expect(home).toContain('Sign in')
    await context.close()
  })

  it('the login form itself still signs in', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${appOrigin}/login`)
    await page.getByLabel('Email').fill(ATTACKER_EMAIL)
    await page.getByLabel('Password').fill(ATTACKER_PASSWORD)
    await Promise.all([
      page.waitForURL(`${appOrigin}/`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ])
    expect(await page.content()).toContain(`Signed in (user ${attackerId})`)
    await context.close()
  })
})
