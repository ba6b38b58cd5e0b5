import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { MemoryKeyValueStore, silentLogger } from '../../../src/core/index.ts'
import { type Database, type ModelRegistry, migrate } from '../../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type DataTools,
  type DataToolsOptions,
  type McpAccessOptions,
  type McpSubscriptions,
  mcpEndpoint,
} from '../../../src/mcp/index.ts'
import { createBearerValidator, type OAuthSession, oauthServer } from '../../../src/oauth/index.ts'
import { MemoryOAuthProvider } from '../../support/memory-oauth-provider.ts'

export const SECRET = 'mcp-test-secret-0123456789-abcdefghijkl'

export interface McpTestApp {
  origin: string
  mcpUrl: URL
  /** Signs a user in; returns the session cookie. */
  signIn(userId: string, tenantId?: string): string
  close(): Promise<void>
}

/** What a test adds to the app: its own routes, and the endpoint's resource subscriptions. */
export interface McpTestAppExtras {
  routes?: (app: Hono) => void
  subscriptions?: (tools: DataTools) => McpSubscriptions
  /** Where the tools publish their writes (the realtime core). */
  realtime?: DataToolsOptions['realtime']
}

/**
 * A small app on 127.0.0.1: kiln's OAuth server at the root, cookie sessions created by the
 * test, and the protected MCP endpoint with the data tools at /mcp.
 */
export async function serveMcpTestApp(
  database: Database,
  models: ModelRegistry,
  access: McpAccessOptions = { unlisted: 'all', approval: [] },
  extras: McpTestAppExtras = {},
): Promise<McpTestApp> {
  await migrate(database, { logger: { info() {}, warn() {} } as never })
  const sessions = new Map<string, OAuthSession>()
  let app: Hono | undefined
  const server = serve({
    fetch: (request) => (app ? app.fetch(request) : new Response(null, { status: 503 })),
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const store = new MemoryKeyValueStore()
  const built = new Hono()
  extras.routes?.(built)
  // With subscriptions, the tools are resolved once (their watch is what subscriptions read).
  const tools = extras.subscriptions
    ? createDataTools({
        database,
        models,
        access,
        logger: silentLogger(),
        realtime: extras.realtime,
      })
    : undefined
  built.route(
    '/',
    oauthServer({
      database,
      store,
      secret: SECRET,
      issuer: origin,
      appName: 'MCP test',
      scopes: ['mcp:read', 'mcp:write'],
      session: async (request) => {
        const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1]
        return sid ? sessions.get(sid) : undefined
      },
    }),
  )
  built.route(
    '/mcp',
    mcpEndpoint({
      validator: createBearerValidator({
        secret: SECRET,
        issuer: origin,
        resource: `${origin}/mcp`,
        store,
      }),
      resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
      ...(tools && extras.subscriptions ? { subscriptions: extras.subscriptions(tools) } : {}),
      createServer: (caller) =>
        tools
          ? createMcpServer({ dataTools: { tools, caller } })
          : createMcpServer({
              data: { database, models, caller, access, logger: silentLogger() },
            }),
    }),
  )
  app = built
  return {
    origin,
    mcpUrl: new URL(`${origin}/mcp`),
    signIn(userId, tenantId) {
      const sid = randomBytes(16).toString('hex')
      sessions.set(sid, {
        userId,
        ...(tenantId ? { tenantId } : {}),
        csrfToken: randomBytes(16).toString('hex'),
      })
      return `sid=${sid}`
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

/**
 * The SDK's OAuth client provider, kept in memory, whose "browser" is fetch with the user's
 * session cookie: it opens the authorization URL, approves on the consent page and keeps the
 * code the redirect carries.
 */
export class HeadlessOAuthProvider extends MemoryOAuthProvider {
  /** The code of the last approval, for `transport.finishAuth`. */
  code: string | undefined

  constructor(private readonly cookie: string) {
    super('http://127.0.0.1:9/callback', { client_name: 'kiln MCP test client' })
  }

  override async redirectToAuthorization(url: URL): Promise<void> {
    const location = await approveConsent(url, this.cookie)
    const code = new URL(location).searchParams.get('code')
    if (!code) throw new Error(`no code in ${location}`)
    this.code = code
  }
}

/**
 * What a person does in the browser: opens the authorization URL with their session cookie and
 * presses Approve on the consent page, leaving every permission ticked. Returns the redirect's location (the client's redirect
 * URI with the code, state and iss).
 */
export async function approveConsent(url: URL | string, cookie: string): Promise<string> {
  const page = await fetch(url, { headers: { cookie }, redirect: 'manual' })
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}`)
  const html = await page.text()
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]
  const fields = new URLSearchParams()
  for (const [, name, value] of html.matchAll(
    /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
  )) {
    fields.set(name!, decodeEntities(value!))
  }
  // The permissions a browser sends: every ticked checkbox.
  for (const [, name, value] of html.matchAll(
    /<input type="checkbox" name="([^"]+)" value="([^"]*)" checked>/g,
  )) {
    fields.append(name!, decodeEntities(value!))
  }
  fields.set('decision', 'approve')
  if (!action) throw new Error('no consent form')
  const decision = await fetch(new URL(decodeEntities(action), url), {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: fields,
    redirect: 'manual',
  })
  const location = decision.headers.get('location')
  if (decision.status < 300 || decision.status > 399 || !location)
    throw new Error(`consent answered ${decision.status}`)
  return location
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}
