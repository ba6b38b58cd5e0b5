import { createHash, createHmac, randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import fc from 'fast-check'
import type { Hono } from 'hono'
import { describe, expect } from 'vitest'
import type { DemoContextOptions } from '../../examples/demo/src/context.ts'
import { demoOAuth } from '../../examples/demo/src/features/oauth.ts'
import { demoJobHandlers } from '../../examples/demo/src/jobs.ts'
import { createApiKey } from '../../src/api/index.ts'
import type { QueueWorker } from '../../src/core/index.ts'
import { createMcpServer, mcpEndpoint } from '../../src/mcp/index.ts'
import { type CookieJar, type DemoUnderTest, hiddenInput, startDemo } from '../demo/support.ts'
import { consentChoices } from '../support/consent-choices.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

/**
 * Runs per property: `FUZZ_RUNS` when set (for long runs: `FUZZ_RUNS=5000 npx vitest run
 * test/fuzz`), else the suite's default, small enough for CI.
 */
export function fuzzRuns(defaultRuns: number): number {
  const configured = Number(process.env.FUZZ_RUNS)
  return Number.isInteger(configured) && configured > 0 ? configured : defaultRuns
}

/**
 * fast-check parameters: the run count, and a replay when `FUZZ_SEED` (and optionally
 * `FUZZ_PATH`) are set, as printed by a failing property.
 */
export function fuzzParameters<T>(defaultRuns: number): fc.Parameters<T> {
  const seed = Number(process.env.FUZZ_SEED)
  return {
    numRuns: fuzzRuns(defaultRuns),
    verbose: fc.VerbosityLevel.Verbose,
    ...(Number.isInteger(seed) ? { seed } : {}),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
  }
}

/** A vitest timeout that grows with the number of runs. */
export function fuzzTimeout(defaultRuns: number, msPerRun = 150): number {
  return 60_000 + fuzzRuns(defaultRuns) * msPerRun
}

/** The demo, as one fuzz suite drives it. */
export interface FuzzDemo extends DemoUnderTest {
  backend: FuzzBackendName
  /** Calls the app in process from a fresh client address, so per-IP throttles stay out of the way. */
  request(path: string, init?: RequestInit): Promise<Response>
}

export type FuzzBackendName = 'pglite' | 'postgres'

export interface FuzzBackend {
  name: FuzzBackendName
  available: boolean
  start(options?: DemoContextOptions): Promise<FuzzDemo>
}

let addressCounter = 0

/** A distinct private IPv4 address per call (the demo trusts X-Forwarded-For in the suites). */
export function nextClientAddress(): string {
  addressCounter += 1
  const n = addressCounter
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
}

const UNREACHED = { max: Number.MAX_SAFE_INTEGER, windowMs: 60_000 }

async function startOn(
  backend: FuzzBackendName,
  options: DemoContextOptions,
  databaseUrl: string,
  drop: () => Promise<void>,
): Promise<FuzzDemo> {
  let demo: DemoUnderTest
  try {
    demo = await startDemo(
      {
        ...options,
        databaseUrl,
        env: { TRUST_PROXY: 'true', APP_URL: 'http://127.0.0.1:3000', ...options.env },
      },
      // One token drives every /mcp run: its rate limits would answer most of them with 429.
      { mcp: { rateLimit: { perUser: UNREACHED, perClient: UNREACHED } } },
    )
  } catch (error) {
    await drop()
    throw error
  }
  mountMcpIfMissing(demo)
  const worker: QueueWorker = demo.ctx.shared.queue.work(demoJobHandlers(demo.ctx), {
    concurrency: 1,
  })
  const app = demo.app
  return {
    ...demo,
    backend,
    async request(path, init = {}) {
      const headers = new Headers(init.headers)
      if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', nextClientAddress())
      return app.request(path, { ...init, headers })
    },
    async close() {
      await worker.close()
      await demo.close()
      await drop()
    },
  }
}

export const fuzzBackends: FuzzBackend[] = [
  {
    name: 'pglite',
    available: true,
    start: (options = {}) => startOn('pglite', options, 'pglite:', async () => {}),
  },
  {
    name: 'postgres',
    available: postgresUrl !== undefined,
    async start(options = {}) {
      const database = await createPostgresTestDatabase()
      return startOn('postgres', options, database.url, database.drop)
    },
  },
]

/** Runs a fuzz suite on the demo over PGlite, and over PostgreSQL when KILN_TEST_DATABASE_URL is set. */
export function describeFuzz(title: string, suite: (backend: FuzzBackend) => void): void {
  for (const backend of fuzzBackends) {
    describe.skipIf(!backend.available)(`${title} [${backend.name}]`, () => suite(backend))
  }
}

/**
 * The `/mcp` endpoint as the demo's MCP feature mounts it: the data tools over the demo's
 * models, behind the demo's bearer validator. Used only while the demo does not mount `/mcp`
 * itself; routes must be added before the app answers its first request.
 */
function mountMcpIfMissing(demo: DemoUnderTest): void {
  if (demo.app.routes.some((route) => route.path === '/mcp' || route.path.startsWith('/mcp/'))) {
    return
  }
  const { ctx, app } = demo
  const oauth = demoOAuth(ctx)
  app.route(
    '/mcp',
    mcpEndpoint({
      validator: oauth.validator,
      resourceMetadataUrl: oauth.resourceMetadataUrl,
      logger: ctx.logger,
      createServer: (caller) =>
        createMcpServer({
          data: { database: ctx.database, models: ctx.models, caller, logger: ctx.logger },
        }),
    }),
  )
}

/**
 * Every table of the database as `name count checksum`, one line each. `api_keys.last_used_at`
 * is left out: accepted requests touch it off the request path, at most once a minute. So is
 * `kiln_mcp_audit`: every tool call, a refused one too, is recorded there off the request path.
 */
export async function tableSnapshot(demo: DemoUnderTest): Promise<string> {
  const { db } = demo.ctx.database
  const tables = (await db.execute(
    sql`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'
          and table_name <> 'kiln_mcp_audit' order by table_name`,
  )) as unknown as { rows: Array<{ name: string }> }
  const parts = tables.rows.map(
    ({ name }) =>
      `select ${quoteLiteral(name)} as name, count(*)::int as n,
         coalesce(md5(string_agg(r, E'\\n' order by r)), '-') as sum
       from (select (to_jsonb(t) - 'last_used_at')::text as r from ${quoteIdent(name)} t) s`,
  )
  const result = (await db.execute(sql.raw(parts.join(' union all ')))) as unknown as {
    rows: Array<{ name: string; n: number; sum: string }>
  }
  return result.rows
    .map((row) => `${row.name} ${row.n} ${row.sum}`)
    .sort()
    .join('\n')
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`
}

export interface Exchange {
  status: number
  headers: Headers
  body: string
}

/** Whether the app refused a request: a 4xx, or a redirect carrying an OAuth error. */
export function isRejection(exchange: Pick<Exchange, 'status' | 'headers'>): boolean {
  if (exchange.status >= 400) return true
  if (exchange.status >= 300 && exchange.status < 400) {
    return /[?&#]error=/.test(exchange.headers.get('location') ?? '')
  }
  return false
}

/**
 * Sends one request and checks the fuzz invariants: no 5xx, the app still answers /health,
 * and a rejected request changed no row. Jobs the request queued are finished before the
 * tables are compared.
 */
export async function exchange(
  demo: FuzzDemo,
  describe: string,
  send: () => Promise<Response>,
  options: { rejected?: (exchange: Exchange) => boolean } = {},
): Promise<Exchange> {
  const before = await tableSnapshot(demo)
  const response = await send()
  const body = await response.text()
  await demo.ctx.shared.queue.drain()
  const result: Exchange = { status: response.status, headers: response.headers, body }
  const context = `${describe}\n→ ${response.status} ${body.slice(0, 500)}`
  expect(response.status, context).toBeLessThan(500)
  if ((options.rejected ?? isRejection)(result)) {
    expect(await tableSnapshot(demo), `a rejected request changed rows\n${context}`).toBe(before)
  }
  const health = await demo.app.request('/health')
  expect(health.status, `/health after ${context}`).toBe(200)
  return result
}

/** One line describing a request for failure messages. */
export function describeRequest(method: string, path: string, init: RequestInit = {}): string {
  const headers = [...new Headers(init.headers)]
    .filter(([name]) => name !== 'x-forwarded-for')
    .map(([name, value]) => `${name}: ${value}`)
  const body =
    typeof init.body === 'string'
      ? init.body.slice(0, 300)
      : init.body instanceof Uint8Array
        ? `<${init.body.byteLength} bytes>`
        : ''
  return [`${method} ${path}`, ...headers, body].join('\n')
}

/** A valid API key of the demo, minted as `kilnjs make:api-key` does. */
export async function mintApiKey(demo: DemoUnderTest, name = 'fuzz'): Promise<string> {
  const created = await createApiKey(demo.ctx.database, { name, scopes: ['*'] })
  return created.rawKey
}

/** A signed-in session of a new demo user (each user has its own wrong-code budget). */
export async function newSession(demo: DemoUnderTest): Promise<{ cookie: string; csrf: string }> {
  const email = `fuzz-${randomBytes(6).toString('hex')}@example.com`
  const rows = (await demo.ctx.database.db.execute(
    sql`insert into users (email, name, password_hash) values (${email}, 'Fuzz', 'x') returning id`,
  )) as unknown as { rows: Array<{ id: number | string }> }
  const id = String(rows.rows[0]?.id)
  const { session, cookie } = await demo.ctx.sessions.create(id)
  return { cookie: cookie.split(';')[0] ?? '', csrf: session.csrfToken }
}

export const REDIRECT_URI = 'http://127.0.0.1:9999/callback'
export const VERIFIER = 'fuzz-verifier-0123456789-abcdefghijklmnopqrstuvwxyz'
export const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')

/** Registers a public client with the authorization-code, refresh and device grants. */
export async function registerClient(
  app: Pick<Hono, 'request'>,
  request: (path: string, init?: RequestInit) => Promise<Response> = async (path, init) =>
    app.request(path, init),
): Promise<string> {
  const response = await request('/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Fuzz client',
      redirect_uris: [REDIRECT_URI],
      grant_types: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      token_endpoint_auth_method: 'none',
    }),
  })
  if (response.status !== 201)
    throw new Error(`register: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { client_id: string }).client_id
}

/** Approves on the consent page for a signed-in session; returns the authorization code. */
export async function authorizationCode(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  cookie: string,
  clientId: string,
  resource: string,
): Promise<string> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'fuzz-state',
    scope: 'mcp',
    resource,
  })
  const page = await request(`/authorize?${query}`, { headers: { cookie } })
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${await page.text()}`)
  const html = await page.text()
  const decision = await request('/authorize', {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([
      ['request_id', decodeHtml(hiddenInput(html, 'request_id'))],
      ['csrf_token', decodeHtml(hiddenInput(html, 'csrf_token'))],
      ['decision', 'approve'],
      ...consentChoices(html),
    ]).toString(),
  })
  const location = decision.headers.get('location') ?? ''
  const code = location ? new URL(location).searchParams.get('code') : null
  if (!code) throw new Error(`decision: ${decision.status} ${location} ${await decision.text()}`)
  return code
}

/** Exchanges a code at /token; returns the token response. */
export async function exchangeCode(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  clientId: string,
  code: string,
): Promise<{ access_token: string; refresh_token: string }> {
  const response = await request('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
    }).toString(),
  })
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`)
  return (await response.json()) as { access_token: string; refresh_token: string }
}

/** A whole authorization-code grant for a signed-in jar: an access token for `/mcp`. */
export async function accessTokenFor(demo: FuzzDemo, jar: CookieJar): Promise<string> {
  const request = demo.request
  const clientId = await registerClient(demo.app, request)
  const { resource } = demoOAuth(demo.ctx)
  const code = await authorizationCode(request, jar.header(), clientId, resource)
  return (await exchangeCode(request, clientId, code)).access_token
}

export function decodeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** `sha256=<hex>` over the exact bytes, as the provider signs webhook bodies. */
export function signBody(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

// ---- shared arbitraries ----

/** Strings that tend to break parsers: unicode, control characters, path and encoding tricks. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '..',
    '../..',
    '%2e%2e',
    '%2F',
    '%00',
    '%',
    '%%',
    '%zz',
    '\uFEFF',
    '\u202E',
    '\uD800',
    '𝕜𝕚𝕝𝕟',
    'null',
    'undefined',
    'NaN',
    '-1',
    '0',
    '1e308',
    '9'.repeat(40),
    "' or 1=1 --",
    '"; drop table users; --',
    '<script>alert(1)</script>',
    '{{7*7}}',
    '$' + '{7*7}',
    '__proto__',
    'constructor',
    'a'.repeat(5000),
  ),
)

/** Any JSON value, including deep and odd ones. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(null, true, 0, -0, 1e308, -1, [], {}, '', [[[[[]]]]]),
  fc.dictionary(nastyString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
)
