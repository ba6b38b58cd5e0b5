/**
 * `npm run conformance`: the official MCP conformance suite against the demo's `/mcp`.
 *
 * 1. Installs `node@22` and `@modelcontextprotocol/conformance` into a temporary folder (the
 *    suite needs Node 22; kiln itself stays on Node 20).
 * 2. Starts the demo on loopback (embedded PGlite) and gets an access token through the real
 *    flow: registration, the login form, the consent page, the token endpoint.
 * 3. Puts a loopback proxy in front of `/mcp` that adds the bearer token (the suite's server
 *    mode has no header option), and runs `server --requirements <revision>` for 2025-11-25
 *    and 2026-07-28 with the baseline of this folder.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { serve } from '@hono/node-server'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import { createDemoContext } from '../../examples/demo/src/context.ts'
import { silentLogger } from '../../src/core/index.ts'
import { signIn } from '../../test/demo/support.ts'
import { HeadlessOAuthProvider } from '../../test/mcp/support/http-app.ts'

const run = promisify(execFile)
const here = fileURLToPath(new URL('.', import.meta.url))
const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12'
const REVISIONS = ['2025-11-25', '2026-07-28']
const EMAIL = 'demo@example.com'
const PASSWORD = 'conformance-password-0123'

async function installSuite(dir: string): Promise<{ node: string; cli: string }> {
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'kiln-conformance', private: true, allowScripts: { node: true } }),
  )
  await run('npm', ['install', '--no-audit', '--no-fund', '--silent', 'node@22', SUITE], {
    cwd: dir,
  })
  return {
    node: join(dir, 'node_modules/.bin/node'),
    cli: join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
  }
}

async function main(): Promise<number> {
  // KILN_CONFORMANCE_DIR keeps the installed suite between runs (it is left in place).
  const kept = process.env.KILN_CONFORMANCE_DIR
  const dir = kept ?? mkdtempSync(join(tmpdir(), 'kiln-conformance-'))
  const cleanups: Array<() => Promise<void>> = kept
    ? []
    : [async () => rmSync(dir, { recursive: true })]
  const extra = process.argv.slice(2)
  try {
    console.log(`installing node@22 and ${SUITE}`)
    const suite = await installSuite(dir)

    const demoServer = serve({ fetch: () => new Response(null, { status: 503 }), port: 0 })
    await new Promise((resolve) => demoServer.once('listening', resolve))
    const port = (demoServer.address() as AddressInfo).port
    demoServer.close()
    const origin = `http://localhost:${port}`
    const ctx = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: {
        APP_URL: origin,
        PORT: String(port),
        MCP_TOKEN_SECRET: 'conformance-secret-0123456789-abcdefghij',
        DEMO_EMAIL: EMAIL,
        DEMO_PASSWORD: PASSWORD,
      },
    })
    const app = await createDemoApp(ctx)
    const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' })
    cleanups.push(async () => {
      server.close()
      await ctx.close()
    })
    await new Promise((resolve) => server.once('listening', resolve))

    // A token through the real flow, as an assistant's client gets one.
    const jar = await signIn(app, EMAIL, PASSWORD)
    const provider = new HeadlessOAuthProvider(jar.header())
    const serverUrl = `${origin}/mcp`
    if ((await auth(provider, { serverUrl })) !== 'REDIRECT') throw new Error('no consent step')
    await auth(provider, { serverUrl, authorizationCode: provider.code! })
    const token = provider.tokens()?.access_token
    if (!token) throw new Error('no access token')

    const proxy = bearerProxy(port, token)
    proxy.listen(0, '127.0.0.1')
    await new Promise((resolve) => proxy.once('listening', resolve))
    cleanups.push(async () => void proxy.close())
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`

    let failed = 0
    for (const revision of REVISIONS) {
      console.log(`\n== server --requirements ${revision}`)
      try {
        const { stdout } = await run(
          suite.node,
          // With arguments (`npm run conformance -- --scenario caching --verbose`) they are
          // passed to the suite instead of the requirement set and its baseline.
          [
            suite.cli,
            'server',
            '--url',
            proxyUrl,
            ...(extra.length > 0
              ? ['--spec-version', revision, ...extra]
              : [
                  '--requirements',
                  revision,
                  '--expected-failures',
                  join(here, `baseline-${revision}.yml`),
                ]),
          ],
          { maxBuffer: 64 * 1024 * 1024 },
        )
        console.log(extra.length > 0 ? stdout : stdout.split('\n').slice(-40).join('\n'))
      } catch (error) {
        failed++
        const { stdout, stderr } = error as { stdout?: string; stderr?: string }
        const output = `${stdout ?? ''}\n${stderr ?? ''}`
        console.log(extra.length > 0 ? output : output.split('\n').slice(-80).join('\n'))
      }
    }
    return failed === 0 ? 0 : 1
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  }
}

/**
 * Forwards to the demo's `/mcp` with the bearer token added. The proxy stands in for the demo:
 * a `Host` or `Origin` naming the proxy is rewritten to the demo's; any other passes unchanged,
 * so the DNS-rebinding scenario reaches the real check.
 */
function bearerProxy(port: number, token: string) {
  const proxy = createServer((incoming, outgoing) => {
    const own = `127.0.0.1:${(proxy.address() as AddressInfo).port}`
    const headers = { ...incoming.headers, authorization: `Bearer ${token}` }
    if (headers.host === own) headers.host = `localhost:${port}`
    if (headers.origin === `http://${own}`) headers.origin = `http://localhost:${port}`
    const forward = httpRequest(
      { host: '127.0.0.1', port, path: incoming.url, method: incoming.method, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    forward.on('error', () => outgoing.destroy())
    incoming.pipe(forward)
  })
  return proxy
}

process.exit(await main())
