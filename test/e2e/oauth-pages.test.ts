import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { s256Challenge } from '../../src/oauth/protocol/pkce.ts'
import { executablePath, hasChromium } from '../support/chromium.ts'
import { type DemoServer, startDemoServer } from '../support/demo-server.ts'
import { isCI } from '../support/env.ts'

if (!hasChromium && !isCI) {
  console.warn(`kiln tests: no chromium at ${executablePath}; the OAuth browser test is skipped.`)
}

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'
const VERIFIER = 'browser-test-verifier-0123456789-abcdefghijklmnop'

describe.skipIf(!hasChromium && !isCI)('OAuth pages in a headless browser (demo app)', () => {
  let browser: Browser
  let issuer: string
  let demo: DemoServer | undefined
  let clientId: string
  let redirectUri: string

  beforeAll(async () => {
    demo = await startDemoServer({
      MCP_TOKEN_SECRET: 'browser-test-secret-0123456789-abcdefgh',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
    })
    ;({ origin: issuer, browser } = demo)
    redirectUri = `${issuer}/oauth-test-callback`
    const registered = await fetch(`${issuer}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Browser Test Client',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
      }),
    })
    expect(registered.status).toBe(201)
    clientId = ((await registered.json()) as { client_id: string }).client_id
  }, 120_000)

  afterAll(async () => demo?.close())

  function authorizeUrl(state: string): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: s256Challenge(VERIFIER),
      code_challenge_method: 'S256',
      state,
    })
    return `${issuer}/authorize?${query}`
  }

  it('logs in, approves, then denies; every page refuses framing', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const pageHeaders: Record<string, string | null> = {}
    page.on('response', (response) => {
      if ((response.headers()['content-type'] ?? '').includes('text/html')) {
        pageHeaders[new URL(response.url()).pathname] =
          response.headers()['x-frame-options'] ?? null
      }
    })

    await page.goto(authorizeUrl('state-approve'))
    expect(new URL(page.url()).pathname).toBe('/login')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    expect(await page.locator('#client-name').textContent()).toBe('Browser Test Client')
    await Promise.all([
      page.waitForURL(/oauth-test-callback/),
      page.getByRole('button', { name: 'Approve' }).click(),
    ])
    const approved = new URL(page.url())
    expect(approved.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(approved.searchParams.get('state')).toBe('state-approve')
    expect(approved.searchParams.get('iss')).toBe(issuer)

    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: approved.searchParams.get('code') ?? '',
        code_verifier: VERIFIER,
        redirect_uri: redirectUri,
        client_id: clientId,
      }),
    })
    expect(token.status).toBe(200)

    await page.goto(authorizeUrl('state-deny'))
    await Promise.all([
      page.waitForURL(/oauth-test-callback/),
      page.getByRole('button', { name: 'Deny' }).click(),
    ])
    const denied = new URL(page.url())
    expect(denied.searchParams.get('error')).toBe('access_denied')
    expect(denied.searchParams.get('state')).toBe('state-deny')
    expect(denied.searchParams.get('iss')).toBe(issuer)

    expect(pageHeaders['/authorize']).toBe('DENY')
    expect(pageHeaders['/login']).toBe('DENY')
    await context.close()
  })

  it('enters a device code in lower case without the hyphen and approves', async () => {
    const started = await fetch(`${issuer}/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId }),
    })
    const device = (await started.json()) as {
      device_code: string
      user_code: string
      verification_uri: string
    }
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(device.verification_uri)
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const input = page.getByLabel('Code')
    await input.waitFor()
    const response = await page.reload()
    expect(response?.headers()['x-frame-options']).toBe('DENY')
    await input.fill(device.user_code.replace('-', '').toLowerCase())
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByText('Device connected').waitFor()

    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.device_code,
        client_id: clientId,
      }),
    })
    expect(token.status).toBe(200)
    await context.close()
  })
})
