import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { demoOAuth } from '../../examples/demo/src/features/oauth.ts'
import { signIn } from '../demo/support.ts'
import {
  anyJson,
  authorizationCode,
  CHALLENGE,
  describeFuzz,
  describeRequest,
  exchange,
  exchangeCode,
  type FuzzDemo,
  fuzzParameters,
  fuzzTimeout,
  nastyString,
  newSession,
  REDIRECT_URI,
  registerClient,
  tableSnapshot,
  VERIFIER,
} from './support.ts'

const RUNS = 200
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const RFC_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'temporarily_unavailable',
  'server_error',
])

function pct(value: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).padStart(2, '0')}`
  }
  return out
}

function form(fields: Array<[string, string]>): string {
  return fields.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')
}

/** Redirect URIs, good and hostile. */
const redirectUri = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      REDIRECT_URI,
      'http://localhost:3000/cb',
      'http://[::1]:8080/cb',
      'https://app.example.com/oauth/callback',
      'com.example.app:/callback',
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'javascript://example.com/%0aalert(1)',
      'data:text/html,<script>alert(1)</script>',
      'DATA:text/html;base64,PHNjcmlwdD4=',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://example.com/x',
      'http://127.0.0.1/cb#frag',
      'http://user:pass@127.0.0.1/cb',
      ' http://127.0.0.1/cb',
      'http://127.0.0.1/cb ',
      'http://127.0.0.1/cb\n',
      'http://127.0.0.1/cb\u0000',
      '\u200Bhttp://127.0.0.1/cb',
      '/relative/cb',
      '//evil.example/cb',
      'http://evil.example/cb',
      'http:/127.0.0.1/cb',
      'http://127.0.0.1:99999/cb',
      'https://例え.jp/cb',
      '*',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  { weight: 1, arbitrary: nastyString },
)

const clientMetadata = fc.record(
  {
    redirect_uris: fc.oneof(
      { weight: 6, arbitrary: fc.array(redirectUri, { minLength: 1, maxLength: 4 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          [],
          Array.from({ length: 200 }, (_, i) => `http://127.0.0.1:${1000 + i}/cb`),
          Array.from({ length: 5000 }, () => REDIRECT_URI),
        ),
      },
      { weight: 1, arbitrary: anyJson },
    ),
    client_name: fc.oneof(fc.string(), nastyString, anyJson),
    grant_types: fc.oneof(
      fc.subarray([
        'authorization_code',
        'refresh_token',
        DEVICE_GRANT,
        'client_credentials',
        'implicit',
      ]),
      anyJson,
    ),
    response_types: fc.oneof(fc.constantFrom(['code'], ['token'], ['code', 'id_token']), anyJson),
    token_endpoint_auth_method: fc.oneof(
      fc.constantFrom('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'),
      anyJson,
    ),
    scope: fc.oneof(fc.constantFrom('mcp', 'mcp admin', ''), nastyString),
    client_uri: fc.oneof(redirectUri, anyJson),
    logo_uri: redirectUri,
  },
  { requiredKeys: [] },
)

/** Markup that must come back escaped wherever input is echoed into a page. */
const XSS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>']

const BAD_SCHEMES = /^(?:javascript|data|vbscript|file|blob):/i

describeFuzz('fuzz: the OAuth endpoints', (backend) => {
  let demo: FuzzDemo
  let clientId: string
  let cookie: string
  let resource: string
  let refreshToken: string

  beforeAll(async () => {
    demo = await backend.start()
    resource = demoOAuth(demo.ctx).resource
    clientId = await registerClient(demo.app, demo.request)
    const jar = await signIn(demo.app, demo.ctx.demoUser.email, demo.ctx.demoUser.password)
    cookie = jar.header()
    const code = await authorizationCode(demo.request, cookie, clientId, resource)
    refreshToken = (await exchangeCode(demo.request, clientId, code)).refresh_token
  })
  afterAll(async () => {
    await demo?.close()
  })

  it(
    '/register: no 5xx, no row for a refused client, and no hostile redirect URI is ever accepted',
    async () => {
      const body = fc.oneof(
        { weight: 8, arbitrary: clientMetadata.map((m) => JSON.stringify(m)) },
        { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? '') },
        { weight: 1, arbitrary: nastyString },
      )
      const contentType = fc.constantFrom(
        'application/json',
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        undefined,
      )
      await fc.assert(
        fc.asyncProperty(body, contentType, async (text, type) => {
          const init: RequestInit = {
            method: 'POST',
            headers: type ? { 'content-type': type } : {},
            body: text,
          }
          const before = await tableSnapshot(demo)
          const result = await exchange(demo, describeRequest('POST', '/register', init), () =>
            demo.request('/register', init),
          )
          if (result.status !== 413) expect(result.headers.get('cache-control')).toBe('no-store')
          if (result.status === 201) {
            const client = JSON.parse(result.body) as { client_id: string; redirect_uris: string[] }
            expect(client.client_id).toMatch(/\S/)
            for (const uri of client.redirect_uris) {
              expect(uri, result.body).not.toMatch(BAD_SCHEMES)
              // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
              expect(uri, result.body).not.toMatch(/[\s\u0000-\u001f\u007f\u200b]/)
              const url = new URL(uri)
              expect(url.username + url.password, uri).toBe('')
              expect(url.hash, uri).toBe('')
            }
            expect(await tableSnapshot(demo)).not.toBe(before)
          } else {
            expect(result.status).toBeGreaterThanOrEqual(400)
            const error = JSON.parse(result.body) as { error: string }
            expect(
              RFC_ERRORS.has(error.error) || result.status === 413 || result.status === 415,
              result.body,
            ).toBe(true)
          }
        }),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS),
  )

  it(
    '/authorize: no 5xx, and redirects go only to the login page or the registered redirect URI',
    async () => {
      const param = (valid: () => string, ...others: string[]) =>
        fc.option(
          fc.oneof(
            { weight: 5, arbitrary: fc.constant(0).map(valid) },
            { weight: 2, arbitrary: fc.constantFrom(...others) },
            { weight: 1, arbitrary: nastyString },
          ),
          { nil: undefined, freq: 10 },
        )
      const params = fc.record({
        response_type: param(() => 'code', 'token', 'CODE', 'code id_token', ''),
        client_id: param(() => clientId, `${clientId}x`, 'unknown-client', ''),
        redirect_uri: param(
          () => REDIRECT_URI,
          `${REDIRECT_URI}/`,
          `${REDIRECT_URI}?x=1`,
          `${REDIRECT_URI}#x`,
          REDIRECT_URI.replace('9999', '9998'),
          REDIRECT_URI.toUpperCase(),
          'http://evil.example/callback',
          'javascript:alert(1)',
          ` ${REDIRECT_URI}`,
        ),
        code_challenge: param(
          () => CHALLENGE,
          '',
          'a',
          'a'.repeat(42),
          'a'.repeat(129),
          `${CHALLENGE}=`,
          '+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+',
        ),
        code_challenge_method: param(() => 'S256', 'plain', 's256', 'S512', ''),
        state: param(() => 'state-1', '', '<script>alert(1)</script>', '"><img src=x>'),
        scope: param(() => 'mcp', 'admin', 'mcp admin', '', 'MCP'),
        resource: param(() => resource, `${resource}/`, 'http://evil.example/mcp', ''),
        signedIn: fc.boolean(),
        duplicate: fc.option(fc.constantFrom('client_id', 'redirect_uri', 'response_type'), {
          nil: undefined,
        }),
      })
      await fc.assert(
        fc.asyncProperty(params, async (p) => {
          const fields: Array<[string, string]> = []
          for (const name of [
            'response_type',
            'client_id',
            'redirect_uri',
            'code_challenge',
            'code_challenge_method',
            'state',
            'scope',
            'resource',
          ] as const) {
            const value = p[name]
            if (value !== undefined) fields.push([name, value])
          }
          if (p.duplicate) fields.push([p.duplicate, 'second-value'])
          const path = `/authorize?${form(fields)}`
          const init: RequestInit = { headers: p.signedIn ? { cookie } : {} }
          const result = await exchange(demo, describeRequest('GET', path, init), () =>
            demo.request(path, init),
          )
          if (result.status >= 300 && result.status < 400) {
            const location = result.headers.get('location') ?? ''
            const toLogin = location.startsWith('/login?')
            // Loopback redirect URIs match on any port (RFC 8252 §7.3).
            const toClient = /^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(location)
            expect(toLogin || toClient, `redirect to ${location}`).toBe(true)
            if (toClient) {
              expect(p.client_id).toBe(clientId)
              // Omitted (or empty), it is the client's only registered URI.
              expect(
                p.redirect_uri === undefined ||
                  p.redirect_uri === '' ||
                  /^http:\/\/127\.0\.0\.1:\d+\/callback$/.test(p.redirect_uri),
                `redirected for ${p.redirect_uri}`,
              ).toBe(true)
            }
          } else if (result.status === 200) {
            expect(p.signedIn).toBe(true)
            expect(result.headers.get('x-frame-options')).toBe('DENY')
            expect(result.body).not.toContain('<script>alert(1)</script>')
            expect(result.body).not.toContain('"><img src=x>')
          } else {
            expect(result.status).toBeGreaterThanOrEqual(400)
          }
        }),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS),
  )

  it(
    '/token: no 5xx, RFC errors, no-store, and a code is exchanged only with its PKCE verifier',
    async () => {
      const verifier = fc.oneof(
        { weight: 3, arbitrary: fc.constant(VERIFIER) },
        {
          weight: 3,
          arbitrary: fc.string({
            unit: fc.constantFrom(...'abcXYZ0189-._~+/= %\u00e9\u0000'.split('')),
            minLength: 0,
            maxLength: 200,
          }),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom('', VERIFIER.toUpperCase(), `${VERIFIER} `, CHALLENGE),
        },
        { weight: 1, arbitrary: nastyString },
      )
      const request = fc.record({
        grant_type: fc.option(
          fc.oneof(
            {
              weight: 6,
              arbitrary: fc.constantFrom('authorization_code', 'refresh_token', DEVICE_GRANT),
            },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                'client_credentials',
                'password',
                'AUTHORIZATION_CODE',
                '',
              ),
            },
            { weight: 1, arbitrary: nastyString },
          ),
          { nil: undefined, freq: 10 },
        ),
        code: fc.oneof(
          { weight: 3, arbitrary: fc.constant('fresh') },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 2, arbitrary: nastyString },
        ),
        code_verifier: fc.option(verifier, { nil: undefined, freq: 8 }),
        redirect_uri: fc.option(
          fc.constantFrom(REDIRECT_URI, REDIRECT_URI, `${REDIRECT_URI}/`, 'http://evil.example/cb'),
          { nil: undefined, freq: 6 },
        ),
        client_id: fc.option(fc.oneof(fc.constant('real'), nastyString), {
          nil: undefined,
          freq: 8,
        }),
        refresh_token: fc.option(fc.oneof(fc.constant('real'), nastyString), { nil: undefined }),
        device_code: fc.option(nastyString, { nil: undefined }),
        resource: fc.option(fc.constantFrom('real', 'http://evil.example/mcp', ''), {
          nil: undefined,
        }),
        encoding: fc.constantFrom('form', 'form', 'form', 'json', 'text', 'none'),
      })
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const fresh =
            r.code === 'fresh'
              ? await authorizationCode(demo.request, cookie, clientId, resource)
              : undefined
          const fields: Array<[string, string]> = []
          if (r.grant_type !== undefined) fields.push(['grant_type', r.grant_type])
          const code = fresh ?? r.code
          if (code !== undefined) fields.push(['code', code])
          if (r.code_verifier !== undefined) fields.push(['code_verifier', r.code_verifier])
          if (r.redirect_uri !== undefined) fields.push(['redirect_uri', r.redirect_uri])
          if (r.client_id !== undefined) {
            fields.push(['client_id', r.client_id === 'real' ? clientId : r.client_id])
          }
          if (r.refresh_token !== undefined) {
            fields.push([
              'refresh_token',
              r.refresh_token === 'real' ? refreshToken : r.refresh_token,
            ])
          }
          if (r.device_code !== undefined) fields.push(['device_code', r.device_code])
          if (r.resource !== undefined) {
            fields.push(['resource', r.resource === 'real' ? resource : r.resource])
          }
          const init: RequestInit =
            r.encoding === 'json'
              ? {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify(Object.fromEntries(fields)),
                }
              : r.encoding === 'none'
                ? { method: 'POST' }
                : {
                    method: 'POST',
                    headers: {
                      'content-type':
                        r.encoding === 'form' ? 'application/x-www-form-urlencoded' : 'text/plain',
                    },
                    body: form(fields),
                  }
          const result = await exchange(demo, describeRequest('POST', '/token', init), () =>
            demo.request('/token', init),
          )
          expect(result.headers.get('cache-control')).toBe('no-store')
          const answer = JSON.parse(result.body) as Record<string, unknown>
          if (result.status === 200) {
            expect(typeof answer.access_token).toBe('string')
            if (r.grant_type === 'authorization_code') {
              expect(fresh, 'only a real code is exchanged').toBeDefined()
              expect(r.code_verifier, 'only with its verifier').toBe(VERIFIER)
            }
            if (r.grant_type === 'refresh_token' && typeof answer.refresh_token === 'string') {
              refreshToken = answer.refresh_token
            }
          } else {
            expect(result.status).toBeGreaterThanOrEqual(400)
            expect(RFC_ERRORS.has(String(answer.error)), result.body).toBe(true)
          }
        }),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS, 250),
  )

  it(
    '/device_authorization: no 5xx, and a grant only for a registered client',
    async () => {
      const request = fc.record({
        client_id: fc.option(fc.oneof(fc.constant('real'), nastyString), {
          nil: undefined,
          freq: 8,
        }),
        scope: fc.option(fc.oneof(fc.constantFrom('mcp', 'admin', ''), nastyString), {
          nil: undefined,
        }),
        resource: fc.option(fc.constantFrom('real', 'http://evil.example/mcp', ''), {
          nil: undefined,
        }),
        type: fc.constantFrom('application/x-www-form-urlencoded', 'application/json', undefined),
      })
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const fields: Array<[string, string]> = []
          if (r.client_id !== undefined) {
            fields.push(['client_id', r.client_id === 'real' ? clientId : r.client_id])
          }
          if (r.scope !== undefined) fields.push(['scope', r.scope])
          if (r.resource !== undefined) {
            fields.push(['resource', r.resource === 'real' ? resource : r.resource])
          }
          const init: RequestInit = {
            method: 'POST',
            headers: r.type ? { 'content-type': r.type } : {},
            body:
              r.type === 'application/json'
                ? JSON.stringify(Object.fromEntries(fields))
                : form(fields),
          }
          const result = await exchange(
            demo,
            describeRequest('POST', '/device_authorization', init),
            () => demo.request('/device_authorization', init),
          )
          expect(result.headers.get('cache-control')).toBe('no-store')
          if (result.status === 200) {
            expect(r.client_id).toBe('real')
            expect(JSON.parse(result.body)).toMatchObject({
              device_code: expect.any(String),
              user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
              verification_uri: expect.any(String),
            })
          } else {
            expect(result.status).toBeGreaterThanOrEqual(400)
          }
        }),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS),
  )

  it(
    '/device: user codes in any form for a signed-in user: no 5xx, approval only for the real code',
    async () => {
      const fullwidth = (s: string) =>
        s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))
      const variant = fc.constantFrom(
        (c: string) => c,
        (c: string) => c.toLowerCase(),
        (c: string) => c.replace('-', ''),
        (c: string) => ` ${c.replace('-', ' ')} `,
        (c: string) => c.split('').join('-'),
        (c: string) => fullwidth(c),
        (c: string) => c.replace('-', '\u200B'),
        (c: string) => c.replace('-', '\u2010'),
        (c: string) => `${c}X`,
        (c: string) => c.slice(1),
        (c: string) => c.replace(/.$/, 'A'),
        (c: string) => c.replace('S', '\u017F'),
        (c: string) => `${c}\u0000`,
      )
      const request = fc.record({
        realCode: fc.boolean(),
        variant,
        random: fc.option(fc.oneof(nastyString, fc.constantFrom(...XSS)), {
          nil: undefined,
          freq: 3,
        }),
        csrf: fc.constantFrom('valid', 'valid', 'valid', 'wrong', 'missing'),
        decision: fc.option(fc.oneof(fc.constantFrom('approve', 'deny'), nastyString), {
          nil: undefined,
        }),
      })
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const session = await newSession(demo)
          let realCode: string | undefined
          if (r.realCode) {
            const grant = await demo.request('/device_authorization', {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: form([['client_id', clientId]]),
            })
            realCode = ((await grant.json()) as { user_code: string }).user_code
          }
          const typed = r.random ?? r.variant(realCode ?? 'BCDF-GHJK')
          const fields: Array<[string, string]> = [['user_code', typed]]
          if (r.csrf !== 'missing') {
            fields.push(['csrf_token', r.csrf === 'valid' ? session.csrf : `${session.csrf}x`])
          }
          if (r.decision !== undefined) fields.push(['decision', r.decision])
          const init: RequestInit = {
            method: 'POST',
            headers: {
              cookie: session.cookie,
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: form(fields),
          }
          const result = await exchange(demo, describeRequest('POST', '/device', init), () =>
            demo.request('/device', init),
          )
          if (result.status === 200) {
            expect(r.csrf).toBe('valid')
            expect(realCode, 'a page for a code that was never issued').toBeDefined()
            const letters = typed.toUpperCase().replace(/[^A-Z]/g, '')
            expect(letters).toBe(realCode!.replace('-', ''))
          }
          for (const payload of XSS) {
            if (typed.includes(payload)) expect(result.body).not.toContain(payload)
          }
          // The pre-filled verification page escapes whatever the link carried.
          const page = await exchange(demo, `GET /device?user_code=${typed}`, () =>
            demo.request(`/device?user_code=${pct(typed)}`, {
              headers: { cookie: session.cookie },
            }),
          )
          expect(page.status).toBe(200)
          for (const payload of XSS) {
            if (typed.includes(payload)) expect(page.body).not.toContain(payload)
          }
        }),
        fuzzParameters(RUNS),
      )
    },
    fuzzTimeout(RUNS, 300),
  )
})
