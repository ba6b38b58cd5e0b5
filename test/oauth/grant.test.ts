import { describe, expect, it } from 'vitest'
import { createOAuthGrants } from '../../src/oauth/index.ts'
import {
  hmacKey,
  signAccessToken,
  verifyAccessToken,
} from '../../src/oauth/protocol/access-token.ts'
import type { GrantableAccess } from '../../src/oauth/protocol/grant.ts'
import {
  authorizeQuery,
  CHALLENGE,
  createHarness,
  form,
  formWithCookie,
  type Harness,
  hiddenField,
  registerClient,
  TEST_SECRET,
  VERIFIER,
} from './support.ts'

const REDIRECT = 'http://127.0.0.1:9999/callback'

const POSTS_AND_COMMENTS: GrantableAccess = {
  scopes: { read: 'mcp:read', write: 'mcp:write' },
  models: [
    { model: 'posts', actions: ['read', 'create', 'update'] },
    { model: 'comments', actions: ['read', 'create'] },
  ],
}

const READ_ONLY: GrantableAccess = {
  scopes: { read: 'mcp:read', write: 'mcp:write' },
  models: [{ model: 'posts', actions: ['read'] }],
}

async function consentPage(harness: Harness, scope = 'mcp:read mcp:write') {
  const client = await registerClient(harness)
  const cookie = harness.sessions.login('alice')
  const page = await harness.request(
    authorizeQuery({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      scope,
    }),
    { headers: { cookie } },
  )
  expect(page.status).toBe(200)
  return { clientId: client.client_id, cookie, html: await page.text() }
}

/** Answers the page with the given fields beside the hidden ones, then exchanges the code. */
async function approveWith(
  harness: Harness,
  shown: Awaited<ReturnType<typeof consentPage>>,
  fields: Record<string, string | string[]>,
) {
  const decided = await harness.request(
    '/authorize',
    formWithCookie(shown.cookie, {
      request_id: hiddenField(shown.html, 'request_id'),
      csrf_token: hiddenField(shown.html, 'csrf_token'),
      decision: 'approve',
      ...fields,
    }),
  )
  expect(decided.status).toBe(303)
  const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? ''
  const res = await harness.request(
    '/token',
    form({
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: shown.clientId,
    }),
  )
  expect(res.status).toBe(200)
  const tokens = (await res.json()) as {
    access_token: string
    refresh_token: string
    scope: string
  }
  return { tokens, claims: await claimsOf(harness, tokens.access_token) }
}

async function claimsOf(harness: Harness, token: string) {
  const res = await harness.request('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { scope: string; grant?: Record<string, string[]> }
}

describe('the consent page offers what the app allows, and the person grants a part of it', () => {
  it('lists each model with a ticked checkbox per action the requested scopes allow', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const { html } = await consentPage(harness)
    const boxes = [...html.matchAll(/name="grant" value="([^"]+)" checked/g)].map((m) => m[1])
    expect(boxes).toEqual([
      'posts:read',
      'posts:create',
      'posts:update',
      'comments:read',
      'comments:create',
    ])
    expect(html).toContain('<code class="muted">mcp:write</code>')

    // Asked for read alone: no write action is offered.
    const readOnly = await consentPage(harness, 'mcp:read')
    expect([...readOnly.html.matchAll(/name="grant" value="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'posts:read',
      'comments:read',
    ])
  })

  it('does not ask for the write scope when nothing can be written (reproduction)', async () => {
    const harness = createHarness({ describeAccess: () => READ_ONLY })
    const shown = await consentPage(harness)
    expect(shown.html).toContain('mcp:read')
    expect(shown.html).not.toContain('mcp:write')
    expect(shown.html).not.toContain('Create, change and delete')
    const { tokens, claims } = await approveWith(harness, shown, {
      grant_choices: '1',
      grant: ['posts:read'],
    })
    expect(tokens.scope).toBe('mcp:read')
    expect(claims.grant).toEqual({ posts: ['read'] })
  })

  it('grants only the ticked permissions: read only, and only some models', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const shown = await consentPage(harness)
    const { tokens, claims } = await approveWith(harness, shown, {
      grant_choices: '1',
      // users:delete was never offered: ignored.
      grant: ['posts:read', 'users:delete'],
    })
    expect(tokens.scope).toBe('mcp:read')
    expect(claims.grant).toEqual({ posts: ['read'] })

    // The refresh token carries the same grant.
    const refreshed = await harness.request(
      '/token',
      form({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: shown.clientId,
      }),
    )
    expect(refreshed.status).toBe(200)
    const next = (await refreshed.json()) as { access_token: string; scope: string }
    expect(next.scope).toBe('mcp:read')
    expect((await claimsOf(harness, next.access_token)).grant).toEqual({ posts: ['read'] })
  })

  it('shows what each connected application was granted', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const first = await consentPage(harness)
    await approveWith(harness, first, { grant_choices: '1', grant: ['posts:read'] })
    const apps = await createOAuthGrants({ store: harness.store }).listForUser('alice')
    expect(apps.map((app) => app.access)).toEqual([{ posts: ['read'] }])
    const page = await harness.request('/connected-apps', { headers: { cookie: first.cookie } })
    expect(await page.text()).toContain(
      '<ul aria-label="Granted access"><li><strong>posts</strong>: read</li></ul>',
    )
  })

  it('keeps the write scope when a write is ticked, and grants nothing when nothing is', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const some = await approveWith(harness, await consentPage(harness), {
      grant_choices: '1',
      grant: ['comments:read', 'comments:create'],
    })
    expect(some.tokens.scope).toBe('mcp:read mcp:write')
    expect(some.claims.grant).toEqual({ comments: ['read', 'create'] })

    const none = await approveWith(harness, await consentPage(harness), { grant_choices: '1' })
    expect(none.tokens.scope).toBe('')
    expect(none.claims.grant).toEqual({})
  })

  it('refuses an approval without the page’s choice marker, granting nothing (reproduction)', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const shown = await consentPage(harness)
    expect(shown.html).toContain('name="grant_choices"')
    const fields = {
      request_id: hiddenField(shown.html, 'request_id'),
      csrf_token: hiddenField(shown.html, 'csrf_token'),
      decision: 'approve',
    }
    const forged = await harness.request('/authorize', formWithCookie(shown.cookie, fields))
    expect(forged.status).toBe(400)
    expect(forged.headers.get('location')).toBeNull()
    expect(await forged.text()).toContain('nothing was granted')
    expect(await createOAuthGrants({ store: harness.store }).listForUser('alice')).toEqual([])
    // The request is still the page's to answer.
    const { claims } = await approveWith(harness, shown, {
      grant_choices: '1',
      grant: ['posts:read'],
    })
    expect(claims.grant).toEqual({ posts: ['read'] })
  })

  it('says so when the app offers nothing', async () => {
    const harness = createHarness({
      describeAccess: () => ({ scopes: { read: 'mcp:read', write: 'mcp:write' }, models: [] }),
    })
    const { html } = await consentPage(harness)
    expect(html).toContain('It will not be able to reach any of your data.')
  })

  it('without describeAccess lists the scopes alone and mints no grant', async () => {
    const harness = createHarness()
    const shown = await consentPage(harness)
    expect(shown.html).not.toContain('name="grant"')
    const { tokens, claims } = await approveWith(harness, shown, {})
    expect(tokens.scope).toBe('mcp:read mcp:write')
    expect(claims.grant).toBeUndefined()
  })

  it('narrows a device grant the same way', async () => {
    const harness = createHarness({ describeAccess: () => POSTS_AND_COMMENTS })
    const client = await registerClient(harness)
    const started = await harness.request(
      '/device_authorization',
      form({ client_id: client.client_id, scope: 'mcp:read mcp:write' }),
    )
    const { device_code, user_code } = (await started.json()) as {
      device_code: string
      user_code: string
    }
    const cookie = harness.sessions.login('alice')
    const entry = await harness.request('/device', { headers: { cookie } })
    const csrf = hiddenField(await entry.text(), 'csrf_token')
    const confirm = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code, csrf_token: csrf }),
    )
    const html = await confirm.text()
    expect(html).toContain('name="grant" value="comments:create" checked')
    const forged = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code, csrf_token: csrf, decision: 'approve' }),
    )
    expect(forged.status).toBe(400)
    const decided = await harness.request(
      '/device',
      formWithCookie(cookie, {
        user_code,
        csrf_token: csrf,
        decision: 'approve',
        grant_choices: '1',
        grant: ['posts:read', 'comments:read'],
      }),
    )
    expect(decided.status).toBe(200)
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code,
        client_id: client.client_id,
      }),
    )
    expect(res.status).toBe(200)
    const tokens = (await res.json()) as { access_token: string; scope: string }
    expect(tokens.scope).toBe('mcp:read')
    expect((await claimsOf(harness, tokens.access_token)).grant).toEqual({
      posts: ['read'],
      comments: ['read'],
    })
  })
})

describe('the grant claim', () => {
  it('refuses a token whose grant is malformed', async () => {
    const key = hmacKey(TEST_SECRET)
    const claims = {
      iss: 'http://127.0.0.1:3000',
      aud: 'http://127.0.0.1:3000/mcp',
      sub: 'alice',
      client_id: 'c',
      scope: 'mcp:read',
      iat: 1000,
      exp: 5000,
      jti: 'j',
      grant_id: 'g',
    }
    const expected = { issuer: claims.iss, audience: claims.aud, now: 2_000_000 }
    const good = await signAccessToken({ ...claims, grant: { posts: ['read'] } }, key)
    expect(await verifyAccessToken(good, key, expected)).toMatchObject({
      ok: true,
      claims: { grant: { posts: ['read'] } },
    })
    const bad = await signAccessToken(
      { ...claims, grant: { posts: ['read', 'own'] } as never },
      key,
    )
    expect(await verifyAccessToken(bad, key, expected)).toEqual({
      ok: false,
      reason: 'The token has malformed claims',
    })
  })
})
