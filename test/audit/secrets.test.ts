import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demoMessaging } from '../../examples/demo/src/features/messaging.ts'
import { demoOAuth } from '../../examples/demo/src/features/oauth.ts'
import { demoStorage } from '../../examples/demo/src/features/storage.ts'
import { revokeApiKey } from '../../src/api/index.ts'
import { createPurgeApi, loadCdnConfig } from '../../src/cdn/index.ts'
import { createLogger, Redactor } from '../../src/core/index.ts'
import { Text } from '../../src/messaging/index.ts'
import { signIn } from '../demo/support.ts'
import {
  authorizationCode,
  decodeHtml,
  type FuzzDemo,
  fuzzBackends,
  mintApiKey,
  REDIRECT_URI,
  registerClient,
  signBody,
  VERIFIER,
} from '../fuzz/support.ts'
import { consentChoices } from '../support/consent-choices.ts'

/** Long, unique test-only values: finding one anywhere means it leaked. */
const unique = (name: string) => `${name}-${randomBytes(24).toString('hex')}`
const SECRETS = {
  MSG_APP_SECRET: unique('audit-msg-app-secret'),
  MSG_ACCESS_TOKEN: `EAA${randomBytes(32).toString('hex')}`,
  MSG_VERIFY_TOKEN: unique('audit-msg-verify-token'),
  MCP_TOKEN_SECRET: unique('audit-mcp-token-secret'),
  CDN_PURGE_TOKEN: unique('audit-cdn-purge-token'),
  STORAGE_URL_SECRET: unique('audit-storage-url-secret'),
  DEMO_PASSWORD: unique('audit-demo-password'),
}

/**
 * The capturing logger's redactor: its own patterns, plus whatever the demo registers on its
 * context's redactor once the context exists (secrets are added there as features start).
 */
class ContextRedactor extends Redactor {
  context: Redactor | undefined
  override scrub(text: string): string {
    const own = super.scrub(text)
    return this.context ? this.context.scrub(own) : own
  }
}

interface StandIn {
  url: string
  requests: Array<{
    method: string
    url: string
    headers: IncomingMessage['headers']
    body: string
  }>
  close(): Promise<void>
}

/** A loopback HTTP server answering with `respond` and recording every request. */
async function standIn(
  respond: (request: { url: string; body: string }) => { status: number; body: unknown },
): Promise<StandIn> {
  const requests: StandIn['requests'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      const answer = respond({ url: req.url ?? '', body })
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(answer.status === 204 ? undefined : JSON.stringify(answer.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** What leaves the app: a response (status, headers, body) or an output captured elsewhere. */
interface Output {
  label: string
  text: string
  /** Secrets this output legitimately carries: the response that issued them. */
  issued: string[]
}

describe('secrets audit: one run of the demo exercising every capability', () => {
  const lines: string[] = []
  const outputs: Output[] = []
  /** Every secret value used in the run, by what it is. */
  const used = new Map<string, string>(Object.entries(SECRETS).map(([k, v]) => [v, k]))
  const redactor = new ContextRedactor()
  let demo: FuzzDemo
  let graph: StandIn
  let cdn: StandIn

  const use = (name: string, value: string) => {
    used.set(value, name)
    return value
  }

  /** Sends a request in process and records the response; returns it with its body read. */
  async function call(
    label: string,
    path: string,
    init: RequestInit = {},
    options: { forwardedFor?: string } = {},
  ): Promise<{ status: number; headers: Headers; body: string; output: Output }> {
    const headers = new Headers(init.headers)
    if (options.forwardedFor) headers.set('x-forwarded-for', options.forwardedFor)
    const response = await demo.request(path, { ...init, headers })
    const body = await response.text()
    const shown = [...response.headers]
      .filter(([name]) => name !== 'location' && name !== 'set-cookie')
      .map(([name, value]) => `${name}: ${value}`)
    const output: Output = {
      label: `${label}: ${init.method ?? 'GET'} ${path} → ${response.status}`,
      text: `${shown.join('\n')}\n\n${body}`,
      issued: [],
    }
    outputs.push(output)
    return { status: response.status, headers: response.headers, body, output }
  }

  function record(label: string, value: unknown) {
    outputs.push({
      label,
      text: `${inspect(value, { depth: 8 })}\n${safeJson(value)}\n${String(value)}`,
      issued: [],
    })
  }

  beforeAll(async () => {
    graph = await standIn(({ body }) => {
      const to = (JSON.parse(body) as { to?: string }).to
      if (to === '12025550143') {
        return {
          status: 200,
          body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.audit-out-1' }] },
        }
      }
      if (to === '12025550144') {
        // A provider that echoes the credential it refused in its message.
        return {
          status: 401,
          body: {
            error: {
              message: `Malformed access token ${SECRETS.MSG_ACCESS_TOKEN}`,
              type: 'OAuthException',
              code: 190,
              fbtrace_id: 'AuditTrace1',
            },
          },
        }
      }
      if (to === '12025550145') {
        return {
          status: 400,
          body: {
            error: {
              message: 'Re-engagement message',
              code: 131047,
              error_data: { details: 'More than 24 hours have passed' },
            },
          },
        }
      }
      return { status: 500, body: { error: { message: 'Unknown error', code: 1 } } }
    })
    cdn = await standIn(({ body }) =>
      body.includes('fail-me')
        ? {
            status: 500,
            body: { id: 'server_error', message: `token ${SECRETS.CDN_PURGE_TOKEN} rejected` },
          }
        : { status: 204, body: undefined },
    )
    const logger = createLogger({
      level: 'trace',
      redactor,
      destination: {
        write(line: string) {
          lines.push(line)
        },
      },
    })
    demo = await fuzzBackends[0]!.start({
      logger,
      env: {
        LOG_LEVEL: 'trace',
        DEMO_PASSWORD: SECRETS.DEMO_PASSWORD,
        MCP_TOKEN_SECRET: SECRETS.MCP_TOKEN_SECRET,
        STORAGE_URL_SECRET: SECRETS.STORAGE_URL_SECRET,
        FILESYSTEM_LOCAL_ROOT: `storage/test-audit-${randomBytes(4).toString('hex')}`,
        MSG_APP_SECRET: SECRETS.MSG_APP_SECRET,
        MSG_ACCESS_TOKEN: SECRETS.MSG_ACCESS_TOKEN,
        MSG_VERIFY_TOKEN: SECRETS.MSG_VERIFY_TOKEN,
        MSG_PHONE_NUMBER_ID: '100000000000001',
        MSG_OWNER_PHONES: '+12025550199',
        MSG_GRAPH_API_URL: graph.url,
      },
    })
    redactor.context = demo.ctx.redactor
  }, 120_000)

  afterAll(async () => {
    await demo?.close().catch(() => {})
    await graph?.close()
    await cdn?.close()
  })

  it('API keys: valid, revoked, wrong and malformed, and errors of every kind', async () => {
    const key = use('API key', await mintApiKey(demo, 'audit'))
    const revoked = use('revoked API key', await mintApiKey(demo, 'audit-revoked'))
    await revokeApiKey(demo.ctx.database, revoked)
    const wrong = use('wrong API key', `${key.slice(0, 8)}${'Z'.repeat(key.length - 8)}`)
    const json = { 'content-type': 'application/json' }
    const bearer = (k: string) => ({ authorization: `Bearer ${k}`, ...json })

    expect((await call('valid key', '/api/v1/posts', { headers: bearer(key) })).status).toBe(200)
    expect(
      (
        await call('create', '/api/v1/users', {
          method: 'POST',
          headers: bearer(key),
          body: JSON.stringify({
            email: 'a@example.com',
            name: 'A',
            password: 'x'.repeat(20),
          }),
        })
      ).status,
    ).toBe(201)
    for (const [label, headers] of [
      ['revoked key', bearer(revoked)],
      ['wrong key', bearer(wrong)],
      ['key without scheme', { authorization: key }],
      [
        'key in basic auth',
        { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
      ],
      ['truncated key', bearer(key.slice(0, -3))],
      ['key and junk', bearer(`${key}junk`)],
    ] as const) {
      expect((await call(label, '/api/v1/posts', { headers })).status).toBe(401)
    }
    // Validation (with the key echoed in a field name and value), malformed JSON, 404, 415.
    expect(
      (
        await call('422', '/api/v1/posts', {
          method: 'POST',
          headers: bearer(key),
          body: JSON.stringify({ title: 5, token_count: key, author_id: key, body: key }),
        })
      ).status,
    ).toBe(422)
    expect(
      (await call('400', '/api/v1/posts', { method: 'POST', headers: bearer(key), body: '{' }))
        .status,
    ).toBe(400)
    expect((await call('404', `/api/v1/posts/${key}`, { headers: bearer(key) })).status).toBe(404)
    expect(
      (
        await call('415', '/api/v1/posts', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
          body: key,
        })
      ).status,
    ).toBe(415)
    // Over the rate limit from one address.
    let limited = 0
    for (let i = 0; i < 62; i++) {
      const res = await call(
        'rate limit',
        '/api/v1/posts',
        { headers: bearer(key) },
        {
          forwardedFor: '10.250.0.1',
        },
      )
      if (res.status === 429) limited++
    }
    expect(limited).toBeGreaterThan(0)
  })

  it('OAuth: a whole flow, a replayed code, refresh rotation, the device grant and bad tokens', async () => {
    // The login form, wrong password first.
    const page = await call('login page', '/login')
    expect(page.status).toBe(200)
    const jar = await signIn(demo.app, demo.ctx.demoUser.email, SECRETS.DEMO_PASSWORD)
    const cookie = jar.header()
    const { resource } = demoOAuth(demo.ctx)

    const clientId = await registerClient(demo.app, demo.request)
    const code = use(
      'authorization code',
      await authorizationCode(demo.request, cookie, clientId, resource),
    )
    const tokenForm = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
    const exchange = await call(
      'code exchange',
      '/token',
      tokenForm({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
      }),
    )
    expect(exchange.status).toBe(200)
    const tokens = JSON.parse(exchange.body) as { access_token: string; refresh_token: string }
    exchange.output.issued.push(
      use('access token', tokens.access_token),
      use('refresh token', tokens.refresh_token),
    )

    // The code again: refused, and the tokens it gave are revoked.
    const replay = await call(
      'replayed code',
      '/token',
      tokenForm({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
      }),
    )
    expect(replay.status).toBe(400)

    // A fresh grant to refresh, then the old refresh token replayed.
    const code2 = use(
      'authorization code',
      await authorizationCode(demo.request, cookie, clientId, resource),
    )
    const second = await call(
      'second exchange',
      '/token',
      tokenForm({
        grant_type: 'authorization_code',
        code: code2,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
      }),
    )
    const tokens2 = JSON.parse(second.body) as { access_token: string; refresh_token: string }
    second.output.issued.push(
      use('access token', tokens2.access_token),
      use('refresh token', tokens2.refresh_token),
    )
    const refreshed = await call(
      'refresh',
      '/token',
      tokenForm({
        grant_type: 'refresh_token',
        refresh_token: tokens2.refresh_token,
        client_id: clientId,
      }),
    )
    expect(refreshed.status).toBe(200)
    const tokens3 = JSON.parse(refreshed.body) as { access_token: string; refresh_token: string }
    refreshed.output.issued.push(
      use('access token', tokens3.access_token),
      use('refresh token', tokens3.refresh_token),
    )
    const reused = await call(
      'reused refresh token',
      '/token',
      tokenForm({
        grant_type: 'refresh_token',
        refresh_token: tokens2.refresh_token,
        client_id: clientId,
      }),
    )
    expect(reused.status).toBe(400)
    expect(
      (
        await call(
          'wrong verifier',
          '/token',
          tokenForm({
            grant_type: 'authorization_code',
            code: code2,
            code_verifier: 'x'.repeat(50),
            client_id: clientId,
            redirect_uri: REDIRECT_URI,
          }),
        )
      ).status,
    ).toBe(400)

    // The device grant: begin, approve with the user code, poll once.
    const begun = await call(
      'device authorization',
      '/device_authorization',
      tokenForm({ client_id: clientId }),
    )
    const grant = JSON.parse(begun.body) as { device_code: string; user_code: string }
    begun.output.issued.push(use('device code', grant.device_code))
    const entry = await call('device page', '/device', { headers: { cookie } })
    const csrf = decodeHtml(/name="csrf_token" value="([^"]+)"/.exec(entry.body)?.[1] ?? '')
    const wrongCode = await call('wrong user code', '/device', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_code: 'BBBB-BBBB', csrf_token: csrf }).toString(),
    })
    expect(wrongCode.status).toBe(400)
    const confirm = await call('device confirmation', '/device', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_code: grant.user_code, csrf_token: csrf }).toString(),
    })
    const approved = await call('device approval', '/device', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([
        ['user_code', grant.user_code],
        ['csrf_token', csrf],
        ['decision', 'approve'],
        ...consentChoices(confirm.body),
      ]).toString(),
    })
    expect(approved.status).toBe(200)
    const polled = await call(
      'device poll',
      '/token',
      tokenForm({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: grant.device_code,
        client_id: clientId,
      }),
    )
    expect(polled.status).toBe(200)
    const tokens4 = JSON.parse(polled.body) as { access_token: string; refresh_token?: string }
    polled.output.issued.push(use('access token', tokens4.access_token))
    if (tokens4.refresh_token)
      polled.output.issued.push(use('refresh token', tokens4.refresh_token))

    // MCP with the access token, a tampered one, the refresh token and an API key as bearer.
    const mcp = (authorization: string, body: unknown) => ({
      method: 'POST',
      headers: {
        authorization,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    })
    const list = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'crud_list', arguments: { model: 'users' } },
    }
    expect((await call('mcp', '/mcp', mcp(`Bearer ${tokens4.access_token}`, list))).status).toBe(
      200,
    )
    const failing = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'crud_create',
        arguments: { model: 'posts', data: { title: tokens4.access_token } },
      },
    }
    expect(
      (await call('mcp tool error', '/mcp', mcp(`Bearer ${tokens4.access_token}`, failing))).status,
    ).toBe(200)
    for (const [label, token] of [
      ['revoked by the replayed code', tokens.access_token],
      ['revoked by the reused refresh token', tokens3.access_token],
      ['tampered token', `${tokens4.access_token.slice(0, -4)}AAAA`],
      ['refresh token as bearer', tokens3.refresh_token],
      ['bad token', 'not-a-token'],
    ] as const) {
      expect((await call(label, '/mcp', mcp(`Bearer ${token}`, list))).status).toBe(401)
    }
  })

  it('messaging: webhooks signed with MSG_APP_SECRET, the handshake, and sends with provider errors', async () => {
    const payload = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: '100000000000001' },
                messages: [
                  {
                    from: '12025550143',
                    id: 'wamid.audit-in-1',
                    timestamp: '1763740800',
                    type: 'text',
                    text: { body: 'hello' },
                  },
                ],
              },
            },
          ],
        },
      ],
    })
    const post = (signature: string | undefined, body = payload) => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature === undefined ? {} : { 'x-hub-signature-256': signature }),
      },
      body,
    })
    expect(
      (
        await call(
          'signed webhook',
          '/messaging/webhook',
          post(signBody(SECRETS.MSG_APP_SECRET, payload)),
        )
      ).status,
    ).toBe(200)
    await demo.ctx.shared.queue.drain()
    expect(
      (await call('bad signature', '/messaging/webhook', post(signBody('wrong', payload)))).status,
    ).toBe(401)
    expect(
      (await call('secret as signature', '/messaging/webhook', post(SECRETS.MSG_APP_SECRET)))
        .status,
    ).toBe(401)
    expect((await call('no signature', '/messaging/webhook', post(undefined))).status).toBe(401)
    const notJson = 'not json'
    expect(
      (
        await call(
          'signed non-JSON',
          '/messaging/webhook',
          post(signBody(SECRETS.MSG_APP_SECRET, notJson), notJson),
        )
      ).status,
    ).toBe(400)
    const verify = (token: string) =>
      `/messaging/webhook?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`
    expect((await call('handshake', verify(SECRETS.MSG_VERIFY_TOKEN))).status).toBe(200)
    expect((await call('wrong verify token', verify(`${SECRETS.MSG_VERIFY_TOKEN}x`))).status).toBe(
      403,
    )

    const messaging = await demoMessaging(demo.ctx)
    if (!messaging) throw new Error('messaging is not configured')
    await expect(messaging.client.send('12025550143', Text('hi'))).resolves.toEqual({
      wamid: 'wamid.audit-out-1',
    })
    for (const phone of ['12025550144', '12025550145', '12025550146']) {
      const error = await messaging.client.send(phone, Text('hi')).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(Error)
      demo.ctx.logger.error({ err: error, phone }, 'audit: send failed')
      record(`send error for ${phone}`, error)
    }
    // The stand-in saw the token exactly where it belongs.
    expect(graph.requests.length).toBeGreaterThanOrEqual(4)
    for (const request of graph.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${SECRETS.MSG_ACCESS_TOKEN}`)
    }
  })

  it('CDN: a purge and a failed purge with CDN_PURGE_TOKEN', async () => {
    const config = loadCdnConfig(
      {
        CDN_URL: 'https://cdn.example.com',
        CDN_PROVIDER: 'digitalocean',
        CDN_PURGE_ZONE: 'endpoint-1',
        CDN_PURGE_TOKEN: SECRETS.CDN_PURGE_TOKEN,
        CDN_PURGE_API_URL: cdn.url,
      },
      { logger: demo.ctx.logger, redactor: demo.ctx.redactor },
    )
    const purge = createPurgeApi(config, { logger: demo.ctx.logger, maxRetries: 0 })
    await purge.purge(['index.html', 'assets/app.css'])
    const error = await purge.purge(['fail-me.html']).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Error)
    demo.ctx.logger.error({ err: error }, 'audit: purge failed')
    record('purge error', error)
    record('CdnConfig', config)
    expect(cdn.requests.length).toBe(2)
    for (const request of cdn.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${SECRETS.CDN_PURGE_TOKEN}`)
    }
  })

  it('configuration objects print without their secrets', async () => {
    const messaging = await demoMessaging(demo.ctx)
    expect(messaging?.config, 'the demo configures messaging from SECRETS').toBeDefined()
    const printed = {
      OAuthConfig: demoOAuth(demo.ctx).config,
      MessagingConfig: messaging?.config,
      AppConfig: demo.ctx.config,
      Storage: demoStorage(demo.ctx),
    }
    for (const [label, value] of Object.entries(printed)) {
      record(label, value)
      const text = outputs.at(-1)?.text ?? ''
      // inspect, JSON and String() of the object: each printed, none with a secret in it.
      expect(text.length, label).toBeGreaterThan(100)
      for (const [name, secret] of Object.entries(SECRETS)) {
        expect(text.includes(secret), `${label} prints ${name}`).toBe(false)
      }
    }
  })

  it('a database failure answers 500 without a secret', async () => {
    const key = use('API key', await mintApiKey(demo, 'audit-db-down'))
    await demo.ctx.database.close()
    const res = await call('database down', '/api/v1/posts?page=2', {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String), code: expect.any(String) })
    expect(res.body).not.toMatch(/select|\bat .+:\d+/i)
  })

  it('no log line, response or printed object carries a secret used in the run', () => {
    expect(lines.length).toBeGreaterThan(20)
    // Every level was captured.
    const levels = new Set(lines.map((line) => (JSON.parse(line) as { level: number }).level))
    for (const level of [20, 30, 40, 50]) expect(levels.has(level), `level ${level}`).toBe(true)
    const leaks: string[] = []
    for (const [value, name] of used) {
      lines.forEach((line, i) => {
        if (line.includes(value)) leaks.push(`${name} in log line ${i}: ${line.slice(0, 300)}`)
      })
      for (const output of outputs) {
        if (output.issued.includes(value)) continue
        if (output.text.includes(value))
          leaks.push(`${name} in ${output.label}: ${output.text.slice(0, 300)}`)
      }
    }
    expect(leaks).toEqual([])
  })
})

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch (error) {
    return `<not serializable: ${(error as Error).message}>`
  }
}
