import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { McpStep } from '../../src/cli/commands/init-mcp.ts'
import { repoRoot as repo } from '../support/processes.ts'
import { allowModel, initializedApp, initMcp, mountAsPrinted } from './support/mcp-app.ts'

const run = promisify(execFile)

const steps = (missing: McpStep[]) => [...missing].sort()

describe('kilnjs init:mcp: the generated module type-checks', () => {
  const cases = [
    ['postgres', 'users'],
    ['postgres', 'plain'],
    ['sqlite', 'users'],
    ['sqlite', 'plain'],
  ] as const
  const roots: string[] = []
  const outputs = new Map<string, string>()

  beforeAll(async () => {
    for (const [dialect, kind] of cases) {
      const root = await initializedApp(`${dialect}-${kind}`, dialect, kind)
      // A database that cannot be reached: the migration step is then listed.
      const { output, written } = await initMcp(root, {
        DATABASE_URL:
          dialect === 'postgres' ? 'postgres://127.0.0.1:1/none' : 'sqlite:/nonexistent/dir/app.db',
      })
      expect(written).toEqual([join(root, 'src/mcp.ts')])
      mountAsPrinted(root, output)
      roots.push(root)
      outputs.set(`${dialect}-${kind}`, output)
    }
  }, 120_000)
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true })
  })

  it('signs in with the users table when it has an email and a password hash', () => {
    const pg = readFileSync(join(roots[0] ?? '', 'src/mcp.ts'), 'utf8')
    expect(pg).toContain('passwordUsers({')
    expect(pg).toContain('byEmail: (email) => find(eq(schema.users.email, email)),')
    expect(pg).toContain('passwordHash: schema.users.passwordHash')
    expect(pg).toContain('credentialStamp: accounts.credentialStamp')
    const sqlite = readFileSync(join(roots[2] ?? '', 'src/mcp.ts'), 'utf8')
    expect(sqlite).toContain('passwordHash: schema.users.password')
    expect(sqlite).toContain("createModelRegistry(schema, 'sqlite')")
  })

  it('leaves a documented hook when there is no such table', () => {
    for (const root of [roots[1], roots[3]]) {
      const module = readFileSync(join(root ?? '', 'src/mcp.ts'), 'utf8')
      expect(module).not.toContain('passwordUsers')
      expect(module).toContain('export const verifyCredentials: VerifyCredentials')
    }
    expect(outputs.get('postgres-plain')).toContain('write verifyCredentials there')
  })

  it('lists every model commented out, behind unlisted: none', () => {
    const module = readFileSync(join(roots[0] ?? '', 'src/mcp.ts'), 'utf8')
    expect(module).toContain("unlisted: 'none',")
    expect(module).toContain("    // users: { tools: ['crud_list'] },")
    expect(module).toContain("    // notes: { tools: ['crud_list'] },")
  })

  it('audits every call, shows it on /connected-apps and offers each model on the consent page', () => {
    for (const root of roots) {
      const module = readFileSync(join(root ?? '', 'src/mcp.ts'), 'utf8')
      expect(module).toContain('const audit = createAuditTrail({ database, logger })')
      expect(module).toMatch(/createDataTools\(\{[^}]*\baudit,/)
      expect(module).toContain('describeAccess: () => tools.describeAccess(),')
      expect(module).toContain('activity: createAuditLog(database),')
      expect(module).toContain('return { close: () => audit.close() }')
    }
  })

  it('prints every step of a new setup', () => {
    for (const output of outputs.values()) {
      expect(output).toContain("import { mountMcp } from './mcp.js'")
      expect(output).toContain('mountMcp(app, { config, logger, database, shared, limiters })')
      expect(output).toContain('npx kilnjs migrate')
      expect(output).toContain('export MCP_TOKEN_SECRET=')
      expect(output).toContain('Uncomment the models assistants may reach in mcpAccess')
    }
  })

  const strict = {
    target: 'es2022',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    paths: { kilnjs: [join(repo, 'src/index.ts')], 'kilnjs/*': [join(repo, 'src/*/index.ts')] },
  }
  for (const [label, resolution] of [
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
    ['bundler', { module: 'preserve', moduleResolution: 'bundler' }],
  ] as const) {
    it(`moduleResolution ${label}: no error in the apps, main.ts mounting the module`, async () => {
      const config = join(repo, 'tmp', `tsconfig.init-mcp-${label}-${process.pid}.json`)
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: { ...strict, ...resolution },
          include: roots.map((root) => join(root, 'src/**/*.ts')),
        }),
      )
      try {
        const result = await run('npx', ['tsc', '-p', config], {
          cwd: repo,
          maxBuffer: 20 * 1024 * 1024,
        }).catch((error: { stdout: string }) => error)
        // kiln's own sources import with `.ts` (they are compiled for the package): only the
        // apps' files are the app's.
        const appErrors = String(result.stdout)
          .split('\n')
          .filter((line) => roots.some((root) => line.includes(relative(repo, root))))
        expect(appErrors).toEqual([])
      } finally {
        rmSync(config, { force: true })
      }
    }, 180_000)
  }
})

describe('kilnjs init:mcp run again', () => {
  let root: string
  beforeAll(async () => {
    root = await initializedApp('again', 'sqlite', 'users')
  }, 60_000)
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('overwrites nothing, and lists only the steps still missing until none is', async () => {
    const database = join(root, 'storage/app.db')
    const env = { DATABASE_URL: `sqlite:${database}` }
    const first = await initMcp(root, env)
    expect(steps(first.missing)).toEqual(['migrate', 'mount', 'policy', 'secret'])
    const module = readFileSync(join(root, 'src/mcp.ts'), 'utf8')

    const second = await initMcp(root, env)
    expect(second.written).toEqual([])
    expect(second.output).toContain('skip   src/mcp.ts (exists)')
    expect(readFileSync(join(root, 'src/mcp.ts'), 'utf8')).toBe(module)

    mountAsPrinted(root, first.output)
    expect(steps((await initMcp(root, env)).missing)).toEqual(['migrate', 'policy', 'secret'])

    const { runMigrate } = await import('../../src/cli/commands/migrate.ts')
    await runMigrate({ cwd: root, env, print: () => {} })
    expect(existsSync(database)).toBe(true)
    allowModel(root, 'notes')
    const secret = { ...env, MCP_TOKEN_SECRET: 'init-mcp-test-secret-0123456789-abcdef' }
    const done = await initMcp(root, secret)
    expect(done.missing).toEqual([])
    expect(done.written).toEqual([])
    expect(done.output).toContain('OAuth and MCP are set up: nothing left to do.')
    expect(done.output).not.toContain('Still to do')
    expect(readFileSync(join(root, 'src/mcp.ts'), 'utf8')).not.toBe(module)
  }, 60_000)
})
