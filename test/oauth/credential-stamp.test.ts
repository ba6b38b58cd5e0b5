import { describe, expect, it } from 'vitest'
import {
  approve,
  CHALLENGE,
  createHarness,
  form,
  formWithCookie,
  type Harness,
  hiddenField,
  registerClient,
  VERIFIER,
} from './support.ts'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A harness whose users' credential stamps the test changes, as a password change would. */
function stampedHarness() {
  const stamps = new Map<string, string>([['alice', 'hash-1']])
  const harness = createHarness({ credentialStamp: async (userId) => stamps.get(userId) })
  return { harness, stamps }
}

async function deviceApproval(harness: Harness) {
  const client = await registerClient(harness)
  const started = await harness.request(
    '/device_authorization',
    form({ client_id: client.client_id }),
  )
  const { device_code: deviceCode, user_code: userCode } = (await started.json()) as Record<
    string,
    string
  >
  const cookie = harness.sessions.login('alice')
  const entry = await harness.request('/device', { headers: { cookie } })
  const csrf = hiddenField(await entry.text(), 'csrf_token')
  const confirm = await harness.request(
    '/device',
    formWithCookie(cookie, { user_code: String(userCode), csrf_token: csrf }),
  )
  const decided = await harness.request(
    '/device',
    formWithCookie(cookie, {
      user_code: hiddenField(await confirm.text(), 'user_code'),
      csrf_token: csrf,
      decision: 'approve',
    }),
  )
  expect(decided.status).toBe(200)
  return { clientId: client.client_id, deviceCode: String(deviceCode) }
}

describe('credentialStamp: an approval is bound to the credentials it was given with', () => {
  it('a device grant approved before a password change yields no token', async () => {
    const { harness, stamps } = stampedHarness()
    const { clientId, deviceCode } = await deviceApproval(harness)
    stamps.set('alice', 'hash-2')
    const res = await harness.request(
      '/token',
      form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
    )
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('a device grant with unchanged credentials yields a token', async () => {
    const { harness } = stampedHarness()
    const { clientId, deviceCode } = await deviceApproval(harness)
    const res = await harness.request(
      '/token',
      form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
    )
    expect(res.status).toBe(200)
  })

  it('a code approved before the user was deleted cannot be exchanged', async () => {
    const { harness, stamps } = stampedHarness()
    const client = await registerClient(harness)
    const location = await approve(harness, harness.sessions.login('alice'), {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:9999/callback',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    })
    stamps.delete('alice')
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        code_verifier: VERIFIER,
        redirect_uri: 'http://127.0.0.1:9999/callback',
        client_id: client.client_id,
      }),
    )
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' })
  })
})
