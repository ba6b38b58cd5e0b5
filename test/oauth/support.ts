import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { type KeyValueStore, ManualClock, MemoryKeyValueStore } from '../../src/core/index.ts'
import type { Database } from '../../src/db/index.ts'
import { migrate } from '../../src/db/migrate.ts'
import { PAGE_SECURITY_HEADERS } from '../../src/oauth/http/page-response.ts'
import {
  bearerAuth,
  type ClientStore,
  createBearerValidator,
  getAccessToken,
  type OAuthServerOptions,
  type OAuthSession,
  oauthCors,
  oauthServer,
  safeReturnTo,
  type ValidateBearer,
} from '../../src/oauth/index.ts'
import { s256Challenge } from '../../src/oauth/protocol/pkce.ts'
import { MemoryClientStore } from '../../src/oauth/store/client-store.ts'

export const TEST_SECRET = 'test-secret-0123456789-abcdefghijklmnop'

/** People of the test app: alice in tenant-a, bob in tenant-b, carol single-tenant. */
export const USERS: Record<string, { password: string; tenantId?: string }> = {
  alice: { password: 'alice-password', tenantId: 'tenant-a' },
  bob: { password: 'bob-password', tenantId: 'tenant-b' },
  carol: { password: 'carol-password' },
}

/** Cookie sessions in a map: enough of an application for the authorization server. */
export class TestSessions {
  readonly #sessions = new Map<string, OAuthSession>()

  /** Signs someone in directly; returns the `Cookie` header value. */
  login(userId: string, tenantId = USERS[userId]?.tenantId): string {
    const id = randomBytes(16).toString('hex')
    this.#sessions.set(id, {
      userId,
      csrfToken: randomBytes(24).toString('base64url'),
      ...(tenantId !== undefined ? { tenantId } : {}),
    })
    return `sid=${id}`
  }

  /** Changes a session's tenant, as a tenant switcher would. */
  switchTenant(cookie: string, tenantId: string): void {
    const session = this.#sessions.get(cookie.replace(/^sid=/, ''))
    if (session) session.tenantId = tenantId
  }

  resolve = async (request: Request): Promise<OAuthSession | undefined> => {
    const id = /(?:^|;\s*)sid=([a-f0-9]+)/.exec(request.headers.get('cookie') ?? '')?.[1]
    return id ? this.#sessions.get(id) : undefined
  }

  /** A minimal real login page: form with email and password, then back to return_to. */
  routes(): Hono {
    const app = new Hono()
    app.get('/login', (c) => {
      const returnTo = safeReturnTo(c.req.query('return_to')) ?? '/'
      const escaped = returnTo.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
      return c.html(
        `<!doctype html><html lang="en"><head><title>Sign in</title></head><body><main><h1>Sign in</h1>
<form method="post" action="/login"><input type="hidden" name="return_to" value="${escaped}">
<label for="email">Email</label><input id="email" name="email" type="text">
<label for="password">Password</label><input id="password" name="password" type="password">
<button type="submit">Sign in</button></form></main></body></html>`,
        200,
        PAGE_SECURITY_HEADERS as Record<string, string>,
      )
    })
    app.post('/login', async (c) => {
      const form = await c.req.parseBody()
      const user = USERS[String(form.email)]
      if (!user || user.password !== form.password) return c.text('Wrong email or password', 401)
      const cookie = this.login(String(form.email))
      c.header('Set-Cookie', `${cookie}; Path=/; HttpOnly; SameSite=Lax`)
      return c.redirect(safeReturnTo(String(form.return_to ?? '')) ?? '/', 303)
    })
    return app
  }
}

export interface Harness {
  app: Hono
  issuer: string
  resource: string
  resourceMetadataUrl: string
  clock: ManualClock | undefined
  store: KeyValueStore
  clients: ClientStore | undefined
  sessions: TestSessions
  validator: ValidateBearer
  /** Calls the app in process with the issuer's origin. */
  request(path: string, init?: RequestInit): Promise<Response>
}

export interface HarnessOptions extends Partial<Omit<OAuthServerOptions, 'session' | 'clock'>> {
  clock?: ManualClock | null
  sessions?: TestSessions
}

/**
 * The authorization server mounted in a small app with a login page and a protected `/mcp`.
 * Without `database`, clients live in memory; without `store`, a memory store on a
 * ManualClock (pass `clock: null` for the system clock).
 */
export function createHarness(options: HarnessOptions = {}): Harness {
  const issuer = options.issuer ?? 'http://127.0.0.1:3000'
  const clock = options.clock === null ? undefined : (options.clock ?? new ManualClock())
  const store = options.store ?? new MemoryKeyValueStore(clock ? { clock } : {})
  const clients = options.database ? undefined : (options.clients ?? new MemoryClientStore())
  const sessions = options.sessions ?? new TestSessions()
  const resource = `${issuer}/mcp`
  const resourceMetadataUrl = `${issuer}/.well-known/oauth-protected-resource/mcp`
  const validator = createBearerValidator({
    secret: options.secret ?? TEST_SECRET,
    issuer,
    resource,
    store,
    ...(clock ? { clock } : {}),
  })
  const app = new Hono()
  app.route('/', sessions.routes())
  app.route(
    '/',
    oauthServer({
      ...serverOptions(options),
      ...(clients ? { clients } : {}),
      secret: options.secret ?? TEST_SECRET,
      issuer,
      store,
      session: sessions.resolve,
      appName: 'Test App',
      ...(clock ? { clock } : {}),
    }),
  )
  app.use('/mcp', oauthCors())
  app.use('/mcp', bearerAuth({ validator, resourceMetadataUrl }))
  app.post('/mcp', (c) => c.json(getAccessToken(c)))
  return {
    app,
    issuer,
    resource,
    resourceMetadataUrl,
    clock,
    store,
    clients,
    sessions,
    validator,
    request: async (path, init) => app.fetch(new Request(`${issuer}${path}`, init)),
  }
}

function serverOptions(options: HarnessOptions): Partial<OAuthServerOptions> {
  const { clock: _clock, sessions: _sessions, ...rest } = options
  return rest
}

/** Serves a harness on 127.0.0.1 at a random port; the issuer is that origin. */
export async function serveHarness(
  options: HarnessOptions = {},
): Promise<Harness & { close(): Promise<void> }> {
  let harness: Harness | undefined
  const server = serve({
    fetch: (request) =>
      harness ? harness.app.fetch(request) : new Response(null, { status: 503 }),
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const { port } = server.address() as AddressInfo
  harness = createHarness({ ...options, issuer: `http://127.0.0.1:${port}` })
  return {
    ...harness,
    close: () =>
      new Promise<void>((resolve, reject) => {
        ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

export async function migrated(database: Database): Promise<Database> {
  await migrate(database, { logger: { info() {}, warn() {} } as never })
  return database
}

export function form(fields: Record<string, string | string[] | undefined>): RequestInit {
  const body = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) body.append(name, item)
  }
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  }
}

export function formWithCookie(
  cookie: string,
  fields: Record<string, string | string[] | undefined>,
): RequestInit {
  const init = form(fields)
  return { ...init, headers: { ...(init.headers as Record<string, string>), cookie } }
}

/** A hidden field's value on a rendered page. */
export function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)
  if (!match?.[1]) throw new Error(`No hidden field ${name} on the page`)
  return match[1].replace(/&amp;/g, '&').replace(/&quot;/g, '"')
}

export const VERIFIER = `${'a'.repeat(20)}${'b'.repeat(23)}-._~xyz`
export const CHALLENGE = s256Challenge(VERIFIER)

export async function registerClient(
  harness: Pick<Harness, 'request'>,
  metadata: Record<string, unknown> = {},
): Promise<{ client_id: string } & Record<string, unknown>> {
  const res = await harness.request('/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test Client',
      redirect_uris: ['http://127.0.0.1:9999/callback'],
      grant_types: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      ...metadata,
    }),
  })
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`)
  return (await res.json()) as { client_id: string }
}

export function authorizeQuery(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) query.set(name, value)
  return `/authorize?${query.toString()}`
}

/**
 * Runs the consent flow in process for a signed-in user: GET /authorize, then Approve.
 * Returns the redirect Location.
 */
export async function approve(
  harness: Harness,
  cookie: string,
  params: Record<string, string | undefined>,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await harness.request(authorizeQuery(params), { headers: { cookie } })
  if (page.status !== 200) {
    throw new Error(`consent page: ${page.status} ${page.headers.get('location') ?? ''}`)
  }
  const html = await page.text()
  const res = await harness.request(
    '/authorize',
    formWithCookie(cookie, {
      request_id: hiddenField(html, 'request_id'),
      csrf_token: hiddenField(html, 'csrf_token'),
      decision,
    }),
  )
  if (res.status !== 303) throw new Error(`decision: ${res.status} ${await res.text()}`)
  return new URL(res.headers.get('location') ?? '')
}

/** Registers, approves, exchanges: a full authorization-code grant in process. */
export async function codeGrant(
  harness: Harness,
  user = 'alice',
  extra: Record<string, string> = {},
): Promise<{ clientId: string; tokens: Record<string, unknown>; cookie: string }> {
  const client = await registerClient(harness)
  const cookie = harness.sessions.login(user)
  const location = await approve(harness, cookie, {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: 'http://127.0.0.1:9999/callback',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'xyz',
    ...extra,
  })
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
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`)
  return {
    clientId: client.client_id,
    tokens: (await res.json()) as Record<string, unknown>,
    cookie,
  }
}
