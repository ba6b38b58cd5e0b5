import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, serveHarness } from '../oauth/support.ts'
import { consentChoices } from '../support/consent-choices.ts'

type Served = Harness & { close(): Promise<void> }

/** A cookie-keeping browser stand-in that does not follow redirects. */
class Browser {
  cookie = ''
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.cookie) headers.set('cookie', this.cookie)
    const res = await fetch(url, { ...init, headers, redirect: 'manual' })
    const setCookie = res.headers.get('set-cookie')
    if (setCookie) this.cookie = setCookie.split(';')[0] ?? ''
    return res
  }
  postForm(url: string | URL, fields: Record<string, string> | [string, string][]) {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
  }
}

function hidden(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]
  if (!value) throw new Error(`no ${name} on the page`)
  return value.replace(/&amp;/g, '&')
}

/** Signs in through the real login form when sent there, then answers the consent page. */
async function consent(browser: Browser, issuer: string, start: URL, decision: 'approve' | 'deny') {
  let res = await browser.fetch(start)
  if (res.status === 302) {
    const login = new URL(res.headers.get('location') ?? '', issuer)
    expect(login.pathname).toBe('/login')
    const returnTo = login.searchParams.get('return_to') ?? ''
    const signedIn = await browser.postForm(`${issuer}/login`, {
      email: 'alice',
      password: 'alice-password',
      return_to: returnTo,
    })
    expect(signedIn.status).toBe(303)
    res = await browser.fetch(new URL(signedIn.headers.get('location') ?? '', issuer))
  }
  expect(res.status).toBe(200)
  const html = await res.text()
  const answer = await browser.postForm(`${issuer}/authorize`, [
    ['request_id', hidden(html, 'request_id')],
    ['csrf_token', hidden(html, 'csrf_token')],
    ['decision', decision],
    ...consentChoices(html),
  ])
  expect(answer.status).toBe(303)
  return new URL(answer.headers.get('location') ?? '')
}

async function approveDevice(browser: Browser, issuer: string, userCode: string) {
  const entry = await browser.fetch(`${issuer}/device`)
  const csrf = hidden(await entry.text(), 'csrf_token')
  const confirm = await browser.postForm(`${issuer}/device`, {
    user_code: userCode,
    csrf_token: csrf,
  })
  expect(confirm.status).toBe(200)
  const html = await confirm.text()
  const done = await browser.postForm(`${issuer}/device`, [
    ['user_code', hidden(html, 'user_code')],
    ['csrf_token', csrf],
    ['decision', 'approve'],
    ...consentChoices(html),
  ])
  expect(done.status).toBe(200)
}

describe('openid-client v6 against the server on loopback', () => {
  let server: Served
  const redirectUri = 'http://127.0.0.1:8123/callback'

  beforeAll(async () => {
    server = await serveHarness({ clock: null })
  })
  afterAll(async () => server?.close())

  async function register(grantTypes: string[]) {
    return client.dynamicClientRegistration(
      new URL(server.issuer),
      {
        client_name: 'openid-client e2e',
        redirect_uris: [redirectUri],
        grant_types: grantTypes,
        token_endpoint_auth_method: 'none',
      },
      client.None(),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    )
  }

  it('discovers the server with RFC 8414', async () => {
    const config = await client.discovery(
      new URL(server.issuer),
      'unused',
      undefined,
      client.None(),
      {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
      },
    )
    const metadata = config.serverMetadata()
    expect(metadata.issuer).toBe(server.issuer)
    expect(metadata.device_authorization_endpoint).toBe(`${server.issuer}/device_authorization`)
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true)
  })

  it('registers dynamically, runs code + PKCE through login and consent, calls /mcp, refreshes', async () => {
    const config = await register(['authorization_code', 'refresh_token'])
    const clientId = config.clientMetadata().client_id
    expect(clientId).toBeTruthy()
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'mcp',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: server.resource,
    })
    const browser = new Browser()
    const callback = await consent(browser, server.issuer, url, 'approve')
    expect(callback.searchParams.get('iss')).toBe(server.issuer)
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.expires_in).toBe(3600)
    const mcp = await fetch(`${server.issuer}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(mcp.status).toBe(200)
    expect(await mcp.json()).toMatchObject({
      sub: 'alice',
      tenant_id: 'tenant-a',
      client_id: clientId,
    })

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '')
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    // Reusing the rotated token is refused, and the family with it.
    await expect(
      client.refreshTokenGrant(config, tokens.refresh_token ?? ''),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    await expect(
      client.refreshTokenGrant(config, refreshed.refresh_token ?? ''),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('receives access_denied with state and iss when the user denies', async () => {
    const config = await register(['authorization_code'])
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    })
    const callback = await consent(new Browser(), server.issuer, url, 'deny')
    await expect(
      client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      }),
    ).rejects.toMatchObject({ error: 'access_denied' })
  })

  it('runs the device grant', async () => {
    const config = await register(['urn:ietf:params:oauth:grant-type:device_code'])
    const device = await client.initiateDeviceAuthorization(config, { scope: 'mcp' })
    expect(device.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
    const browser = new Browser()
    browser.cookie = server.sessions.login('bob')
    await approveDevice(browser, server.issuer, device.user_code.toLowerCase().replace('-', ''))
    const tokens = await client.pollDeviceAuthorizationGrant(config, device)
    const mcp = await fetch(`${server.issuer}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(await mcp.json()).toMatchObject({ sub: 'bob', tenant_id: 'tenant-b' })
  })
})

describe('oauth4webapi: each device-polling error', () => {
  let server: Served
  let as: oauth.AuthorizationServer
  let registered: oauth.Client
  let other: oauth.Client
  const options = { [oauth.allowInsecureRequests]: true }

  beforeAll(async () => {
    server = await serveHarness()
    const issuer = new URL(server.issuer)
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }),
    )
    const register = async () =>
      (await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(
          as,
          {
            grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
            token_endpoint_auth_method: 'none',
          },
          options,
        ),
      )) as oauth.Client
    registered = await register()
    other = await register()
  })
  afterAll(async () => server?.close())

  async function start() {
    const res = await oauth.deviceAuthorizationRequest(
      as,
      registered,
      oauth.None(),
      { scope: 'mcp' },
      options,
    )
    return oauth.processDeviceAuthorizationResponse(as, registered, res)
  }

  async function pollError(deviceCode: string, who: oauth.Client = registered): Promise<string> {
    const res = await oauth.deviceCodeGrantRequest(as, who, oauth.None(), deviceCode, options)
    try {
      await oauth.processDeviceCodeResponse(as, who, res)
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) return error.error
      throw error
    }
    return 'success'
  }

  it('authorization_pending, then slow_down, then success once, then expired_token', async () => {
    const device = await start()
    expect(await pollError(device.device_code)).toBe('authorization_pending')
    expect(await pollError(device.device_code)).toBe('slow_down')
    server.clock?.advance(10_000)
    const browser = new Browser()
    browser.cookie = server.sessions.login('carol')
    await approveDevice(browser, server.issuer, device.user_code)
    expect(await pollError(device.device_code)).toBe('success')
    server.clock?.advance(10_000)
    expect(await pollError(device.device_code)).toBe('expired_token')
  })

  it('access_denied', async () => {
    const device = await start()
    const browser = new Browser()
    browser.cookie = server.sessions.login('carol')
    const entry = await browser.fetch(`${server.issuer}/device`)
    const csrf = hidden(await entry.text(), 'csrf_token')
    await browser.postForm(`${server.issuer}/device`, {
      user_code: device.user_code,
      csrf_token: csrf,
      decision: 'deny',
    })
    expect(await pollError(device.device_code)).toBe('access_denied')
  })

  it('expired_token after 600 s and for unknown codes', async () => {
    const device = await start()
    server.clock?.advance(600_000)
    expect(await pollError(device.device_code)).toBe('expired_token')
    expect(await pollError('no-such-device-code')).toBe('expired_token')
  })

  it("invalid_grant for another client's client_id", async () => {
    const device = await start()
    expect(await pollError(device.device_code, other)).toBe('invalid_grant')
  })
})
