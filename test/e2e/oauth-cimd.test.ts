import * as client from 'openid-client'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentRoute, serveClientSite } from '../oauth/cimd-support.ts'
import { type Harness, serveHarness } from '../oauth/support.ts'
import { executablePath, hasChromium, launchChromium } from '../support/chromium.ts'
import { isCI } from '../support/env.ts'

/**
 * An OAuth client that identifies itself by the URL of its metadata document (CIMD) and never
 * registers: openid-client drives the flow, a headless Chromium signs in and clicks Approve.
 * The client's site (document and redirect URI) is a loopback server, which the authorization
 * server may fetch only because the test turns on the development flag.
 */
describe.skipIf(!hasChromium && !isCI)('CIMD client through the code flow in Chromium', () => {
  let browser: Browser
  let server: Harness & { close(): Promise<void> }
  let site: Awaited<ReturnType<typeof serveClientSite>>

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI=true needs chromium at ${executablePath}`)
    site = await serveClientSite({
      '/oauth/client.json': documentRoute((origin) => ({
        client_id: `${origin}/oauth/client.json`,
        client_name: 'CIMD Test Client',
        redirect_uris: [`${origin}/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        application_type: 'web',
      })),
      '/callback': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.')
      },
    })
    server = await serveHarness({
      clock: null,
      clientIdMetadataDocuments: { allowLoopback: true },
    })
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await site?.close()
  })

  it('discovers, signs in, approves on the consent page and gets a working token', async () => {
    const clientId = `${site.origin}/oauth/client.json`
    const redirectUri = `${site.origin}/callback`
    const config = await client.discovery(
      new URL(server.issuer),
      clientId,
      undefined,
      client.None(),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    )
    expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true)

    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const authorizeUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'mcp:read mcp:write',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: server.resource,
    })

    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(authorizeUrl.href)
    expect(new URL(page.url()).pathname).toBe('/login')
    await page.getByLabel('Email').fill('alice')
    await page.getByLabel('Password').fill('alice-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    expect(await page.locator('#client-name').textContent()).toBe('CIMD Test Client')
    expect(await page.locator('#verified-host').textContent()).toBe(new URL(site.origin).host)
    await Promise.all([
      page.waitForURL(/\/callback\?/),
      page.getByRole('button', { name: 'Approve' }).click(),
    ])
    const callback = new URL(page.url())
    await context.close()

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.scope).toBe('mcp:read mcp:write')
    const mcp = await fetch(`${server.issuer}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(mcp.status).toBe(200)
    expect(await mcp.json()).toMatchObject({ client_id: clientId, sub: 'alice' })
    expect(site.fetches['/oauth/client.json']).toBe(1)
  }, 60_000)
})
