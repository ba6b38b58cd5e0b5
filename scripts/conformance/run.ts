/**
 * `npm run conformance`: the official MCP conformance suite against the demo's `/mcp`.
 *
 * 1. Installs `node@22` and `@modelcontextprotocol/conformance` into a temporary folder (the
 *    suite needs Node 22; kiln itself stays on Node 20).
 * 2. Starts the demo on loopback (embedded PGlite) and gets an access token through the real
 *    flow: registration, the login form, the consent page, the token endpoint.
 * 3. Runs `authorization` against the demo's authorization server: a client registered for
 *    the suite's callback, the suite's authorization URL opened and approved as a signed-in
 *    person would, and every check required to pass (no warning, no skip).
 * 4. Puts a loopback proxy in front of `/mcp` that adds the bearer token (the suite's server
 *    mode has no header option), and runs `server --requirements <revision>` for 2025-11-25
 *    and 2026-07-28 with the baseline of this folder. The demo's `/mcp` serves the suite's
 *    fixture tools here (`fixture-tools.ts`), beside its data tools, and declares `logging`.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
import { approveConsent, HeadlessOAuthProvider } from '../../test/mcp/support/http-app.ts'
import { registerFixtureResources } from './fixture-resources.ts'
import { registerFixtureTools } from './fixture-tools.ts'

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
  // `npm run conformance -- authorization` runs only the authorization mode; other arguments
  // go to the server mode instead of the requirement sets and their baselines.
  const onlyAuthorization = process.argv[2] === 'authorization'
  const extra = onlyAuthorization ? [] : process.argv.slice(2)
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
    const app = await createDemoApp(ctx, {
      mcp: {
        register: [registerFixtureTools, registerFixtureResources],
        logging: true,
        // Every scenario runs on one token: the per-user limit would cut the run short.
        rateLimit: { perUser: { max: 100_000, windowMs: 60_000 } },
      },
    })
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
    if (extra.length === 0) {
      console.log('\n== authorization')
      const passed = await runAuthorization(suite, origin, jar.header(), dir).catch(
        (error: Error) => {
          console.log(`authorization: ${error.message}`)
          return false
        },
      )
      if (!passed) failed++
    }
    for (const revision of onlyAuthorization ? [] : REVISIONS) {
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
        console.log(extra.length > 0 ? stdout : summaryOf(stdout))
      } catch (error) {
        failed++
        const { stdout, stderr } = error as { stdout?: string; stderr?: string }
        const output = `${stdout ?? ''}\n${stderr ?? ''}`
        console.log(extra.length > 0 ? output : summaryOf(output))
      }
    }
    return failed === 0 ? 0 : 1
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  }
}

/**
 * The suite's summary: one line per scenario (from the first `✓`/`✗` line on), then the totals
 * and the baseline check; the per-check log before it is left out.
 */
function summaryOf(output: string): string {
  const lines = output.split('\n')
  const first = lines.findIndex((line) => /^[✓✗] /.test(line))
  return lines.slice(first >= 0 ? first : -80).join('\n')
}

/**
 * The suite's `authorization` mode against the demo's authorization server. Its
 * authorization-code scenario prints an authorization URL and waits for the browser to come
 * back to its callback: here the signed-in person's cookie opens it and approves, and the
 * redirect is followed to the callback. Every check must be a success: a warning or a skipped
 * check fails the run too.
 */
async function runAuthorization(
  suite: { node: string; cli: string },
  origin: string,
  cookie: string,
  dir: string,
): Promise<boolean> {
  const callbackPort = await freePort()
  const redirectUri = `http://127.0.0.1:${callbackPort}/callback`
  const metadata = (await (
    await fetch(`${origin}/.well-known/oauth-authorization-server`)
  ).json()) as { registration_endpoint: string }
  const registration = await fetch(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'MCP conformance suite',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }),
  })
  if (registration.status !== 201) throw new Error(`registration answered ${registration.status}`)
  const { client_id } = (await registration.json()) as { client_id: string }

  const results = mkdtempSync(join(dir, 'authorization-'))
  const child = spawn(
    suite.node,
    [
      suite.cli,
      'authorization',
      '--url',
      origin,
      '--client-id',
      client_id,
      '--port',
      String(callbackPort),
      '--output-dir',
      results,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
  let approval: Promise<void> | undefined
  let buffered = ''
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk))
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    for (const line of lines) {
      console.log(`  ${line}`)
      if (!approval && line.startsWith(`${origin}/`) && line.includes('response_type=code')) {
        approval = approveConsent(line.trim(), cookie).then(followToCallback)
        approval.catch((error: Error) => {
          console.log(`approval failed: ${error.message}`)
          child.kill()
        })
      }
    }
  })
  await exited
  await approval?.catch(() => {})

  const checks: Array<{ id: string; status: string; description: string; errorMessage?: string }> =
    []
  for (const entry of readdirSync(results, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    checks.push(...JSON.parse(readFileSync(join(results, entry.name, 'checks.json'), 'utf8')))
  }
  for (const check of checks) {
    console.log(
      `  ${check.status.padEnd(8)} ${check.id}: ${check.description}${check.errorMessage ? ` (${check.errorMessage})` : ''}`,
    )
  }
  const others = checks.filter((check) => check.status !== 'SUCCESS')
  const scenarios = new Set(checks.map((check) => check.id))
  const complete =
    scenarios.has('authorization-server-metadata') && scenarios.has('authorization-code-grant')
  console.log(
    `authorization: ${checks.length - others.length} of ${checks.length} checks succeeded, ${others.length} did not${complete ? '' : ', scenarios missing'}`,
  )
  return others.length === 0 && complete
}

/** The suite's callback server listens once it has printed the URL: a few tries to reach it. */
async function followToCallback(location: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await fetch(location)
      if (answer.status !== 200) throw new Error(`callback answered ${answer.status}`)
      return
    } catch (error) {
      if (attempt >= 20) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

async function freePort(): Promise<number> {
  const probe = createServer()
  probe.listen(0, '127.0.0.1')
  await new Promise((resolve) => probe.once('listening', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
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
