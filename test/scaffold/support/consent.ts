import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser } from 'playwright-core'
import { expect } from 'vitest'
import { MemoryOAuthProvider } from '../../support/memory-oauth-provider.ts'

export { hasChromium, launchChromium, skipBrowser } from '../../support/chromium.ts'

/**
 * The MCP SDK client connecting to `{issuer}/mcp` as an assistant does: it discovers the
 * server from the 401, registers, and sends the person to the consent page, where they sign in
 * (kiln's login page) and press Approve in Chromium; the code becomes its token.
 */
export async function connectThroughConsent(
  browser: Browser,
  issuer: string,
  person: { email: string; password: string },
): Promise<Client> {
  const serverUrl = `${issuer}/mcp`
  const provider = new MemoryOAuthProvider(`${issuer}/oauth-callback`)
  expect(await auth(provider, { serverUrl })).toBe('REDIRECT')

  const page = await browser.newPage()
  try {
    await page.goto(String(provider.authorizationUrl))
    expect(new URL(page.url()).pathname).toBe('/login')
    await page.getByLabel('Email').fill(person.email)
    await page.getByLabel('Password').fill(person.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    expect(await page.textContent('body')).toContain('MCP SDK client')
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/oauth-callback'),
      page.getByRole('button', { name: 'Approve' }).click(),
    ])
    const code = new URL(page.url()).searchParams.get('code') ?? ''
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED')
  } finally {
    await page.close()
  }
  const client = new Client({ name: 'kiln-test', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }),
  )
  return client
}
