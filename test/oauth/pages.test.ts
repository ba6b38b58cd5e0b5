import { describe, expect, it } from 'vitest'
import {
  authorizeQuery,
  CHALLENGE,
  createHarness,
  form,
  formWithCookie,
  hiddenField,
  registerClient,
} from './support.ts'

function expectPageHeaders(res: Response, what: string) {
  expect(res.headers.get('content-type'), what).toContain('text/html')
  expect(res.headers.get('x-frame-options'), what).toBe('DENY')
  expect(res.headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'")
  expect(res.headers.get('content-security-policy'), what).toContain("default-src 'none'")
  expect(res.headers.get('cache-control'), what).toBe('no-store')
}

describe('pages: clickjacking headers on every page', () => {
  it('consent, device entry, device consent, device result, error pages', async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const cookie = harness.sessions.login('alice')
    const params = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:9999/callback',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }
    const consent = await harness.request(authorizeQuery(params), { headers: { cookie } })
    expectPageHeaders(consent, 'consent')
    const html = await consent.text()
    expect(html).not.toMatch(/<script|<link|src="http/)

    expectPageHeaders(
      await harness.request(authorizeQuery({ ...params, client_id: 'x' })),
      'error page',
    )
    const csrfFail = await harness.request(
      '/authorize',
      formWithCookie(cookie, {
        request_id: hiddenField(html, 'request_id'),
        csrf_token: 'x',
        decision: 'approve',
      }),
    )
    expectPageHeaders(csrfFail, 'csrf error')

    const entry = await harness.request('/device', { headers: { cookie } })
    expectPageHeaders(entry, 'device entry')
    const csrf = hiddenField(await entry.text(), 'csrf_token')
    const device = (await (
      await harness.request('/device_authorization', form({ client_id: client.client_id }))
    ).json()) as { user_code: string }
    const deviceConsent = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code: device.user_code, csrf_token: csrf }),
    )
    expectPageHeaders(deviceConsent, 'device consent')
    const wrong = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code: 'XXXX', csrf_token: csrf }),
    )
    expectPageHeaders(wrong, 'device wrong code')
    const result = await harness.request(
      '/device',
      formWithCookie(cookie, {
        user_code: device.user_code,
        csrf_token: csrf,
        decision: 'approve',
      }),
    )
    expectPageHeaders(result, 'device result')
  })

  it('pages are accessible: lang, title, labelled input, real buttons', async () => {
    const harness = createHarness()
    const cookie = harness.sessions.login('alice')
    const html = await (await harness.request('/device', { headers: { cookie } })).text()
    expect(html).toContain('<html lang="en">')
    expect(html).toMatch(/<title>[^<]+<\/title>/)
    expect(html).toContain('<label for="user_code">')
    expect(html).toContain('id="user_code" name="user_code"')
    expect(html).toMatch(/<button type="submit"/)
  })
})
