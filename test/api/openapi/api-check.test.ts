import { execFile } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { promisify, stripVTControlCharacters } from 'node:util'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../../examples/demo/src/app.ts'
import { createDemoContext, type DemoContext } from '../../../examples/demo/src/context.ts'
import { createApiKey, revokeApiKey } from '../../../src/api/index.ts'
import { runApiCheck } from '../../../src/cli/commands/api-check.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { freePort } from '../../support/processes.ts'

const run = promisify(execFile)

async function listen(app: Hono): Promise<{ url: string; close(): Promise<void> }> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

function collect() {
  const lines: string[] = []
  return { lines, print: (line: string) => lines.push(stripVTControlCharacters(line)) }
}

describe('kilnjs api:check', () => {
  let ctx: DemoContext
  let demo: { url: string; close(): Promise<void> }
  let key: string

  beforeAll(async () => {
    ctx = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: { APP_NAME: 'Kiln Demo', MCP_TOKEN_SECRET: 'check-test-secret-0123456789-abcdefgh' },
    })
    demo = await listen(await createDemoApp(ctx))
    key = (await createApiKey(ctx.database, { name: 'check', scopes: ['*'] })).rawKey
  }, 120_000)
  afterAll(async () => {
    await demo?.close()
    await ctx?.close()
  })

  it('passes the four checks on the demo and prints the MCP registration command', async () => {
    const out = collect()
    const result = await runApiCheck({ apiKey: key, url: demo.url, print: out.print })
    expect(result.ok, out.lines.join('\n')).toBe(true)
    expect(out.lines.slice(0, 4)).toEqual([
      `✓ Server reachable at ${demo.url}`,
      '✓ Spec found at /api/openapi.json',
      expect.stringMatching(/^✓ Valid OpenAPI 3\.0\.3 document \(\d+ operations\)$/),
      expect.stringMatching(/^✓ API key accepted \(GET \/api\/v1\/[\w/]+ answered 200\)$/),
    ])
    expect(result.mcpCommand).toBe(
      `claude mcp add kiln-demo -- npx kilnjs mcp --api-url ${demo.url} --api-key ${key}`,
    )
    expect(out.lines).toContain(`  ${result.mcpCommand}`)
  })

  it('--url defaults to APP_URL', async () => {
    const out = collect()
    const result = await runApiCheck({ apiKey: key, env: { APP_URL: demo.url }, print: out.print })
    expect(result.ok).toBe(true)
  })

  it('connection refused: ✗ on the first check, nothing else', async () => {
    const out = collect()
    const url = `http://127.0.0.1:${await freePort()}`
    const result = await runApiCheck({ apiKey: key, url, print: out.print })
    expect(result.ok).toBe(false)
    expect(out.lines).toEqual([`✗ Server at ${url} is not reachable: connection refused`])
  })

  it('404 on the spec path', async () => {
    const out = collect()
    const result = await runApiCheck({
      apiKey: key,
      url: demo.url,
      specPath: '/nope.json',
      print: out.print,
    })
    expect(result.ok).toBe(false)
    expect(out.lines).toEqual([
      `✓ Server reachable at ${demo.url}`,
      '✗ Spec path /nope.json answered 404; expected 200 (see --spec-path)',
    ])
  })

  it('an invalid document names its first validation error', async () => {
    const bad = new Hono()
    bad.get('/api/openapi.json', (c) =>
      c.json({ openapi: '3.0.3', info: { title: 'Bad' }, paths: { '/api/x': { get: {} } } }),
    )
    bad.get('/swagger.json', (c) => c.json({ swagger: '2.0' }))
    bad.get('/wrong-type.json', (c) =>
      c.json({
        openapi: '3.0.3',
        info: { title: 'Bad', version: '1' },
        paths: {
          '/api/x': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { type: 'strin' } } },
                },
              },
            },
          },
        },
      }),
    )
    bad.get('/text', (c) => c.text('hello'))
    const server = await listen(bad)
    try {
      const out = collect()
      expect((await runApiCheck({ apiKey: key, url: server.url, print: out.print })).ok).toBe(false)
      expect(out.lines[2]).toBe(
        "✗ Invalid OpenAPI document: #/info must have required property 'version'",
      )
      expect(out.lines).toHaveLength(3)
      const wrongType = collect()
      await runApiCheck({
        apiKey: key,
        url: server.url,
        specPath: '/wrong-type.json',
        print: wrongType.print,
      })
      expect(wrongType.lines[2]).toBe(
        '✗ Invalid OpenAPI document: #/paths/~1api~1x/get/responses/200/content/application~1json/schema/type must be equal to one of the allowed values',
      )
      const swagger = collect()
      await runApiCheck({
        apiKey: key,
        url: server.url,
        specPath: '/swagger.json',
        print: swagger.print,
      })
      expect(swagger.lines[2]).toBe(
        '✗ Invalid OpenAPI document: expected "openapi": "3.x.y", found null',
      )
      const text = collect()
      await runApiCheck({ apiKey: key, url: server.url, specPath: '/text', print: text.print })
      expect(text.lines[1]).toBe('✗ Spec path /text did not answer JSON')
    } finally {
      await server.close()
    }
  })

  it('401 for an unknown or revoked key', async () => {
    const out = collect()
    const unknown = `kl_live_${'Z'.repeat(43)}`
    const result = await runApiCheck({ apiKey: unknown, url: demo.url, print: out.print })
    expect(result.ok).toBe(false)
    expect(out.lines[3]).toMatch(/^✗ API key rejected: GET \/api\/v1\/[\w/]+ answered 401$/)
    const created = await createApiKey(ctx.database, { name: 'revoked' })
    await revokeApiKey(ctx.database, created.record.id)
    const revoked = collect()
    expect(
      (await runApiCheck({ apiKey: created.rawKey, url: demo.url, print: revoked.print })).ok,
    ).toBe(false)
    expect(revoked.lines[3]).toMatch(/answered 401$/)
  })

  it('the command exits 1 on a failed check', async () => {
    const url = `http://127.0.0.1:${await freePort()}`
    const result = await run('node', [
      'bin/kiln.js',
      'api:check',
      '--api-key',
      key,
      '--url',
      url,
    ]).catch((error: { code: number; stdout: string }) => error)
    expect((result as { code?: number }).code).toBe(1)
    expect(String(result.stdout)).toContain('connection refused')
  }, 60_000)
})
