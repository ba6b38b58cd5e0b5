import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runInit } from '../../src/cli/commands/init.ts'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')

const USERS_SCHEMA = `import { pgTable, serial, text, varchar } from 'drizzle-orm/pg-core'

export const users = pgTable('users', {
  id: serial('id').primaryKey(),
  email: varchar('email', { length: 255 }).notNull().unique(),
  password: text('password').notNull(),
})

export const notes = pgTable('notes', {
  id: serial('id').primaryKey(),
  body: text('body').notNull(),
})
`

const NOTES_SCHEMA = `import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export const notes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  body: text('body').notNull(),
})
`

/** An existing app before kiln: package.json and a schema, under the repository so `kiln` resolves. */
function makeApp(name: string, schema: string) {
  const root = join(repo, 'tmp', `init-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src/db'), { recursive: true })
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ name, type: 'module', dependencies: { hono: '*', 'drizzle-orm': '*' } }),
  )
  writeFileSync(join(root, 'src/db/schema.ts'), schema)
  return root
}

/** init --main, then make:api --all, each as a user runs them; returns what each printed. */
async function initAndGenerate(root: string, dialect: 'postgres' | 'sqlite') {
  const initOutput: string[] = []
  const makeApiOutput: string[] = []
  await runInit({
    cwd: root,
    dialect,
    main: 'src/main.ts',
    yes: true,
    print: (line) => initOutput.push(line),
  })
  await runMakeApi({ cwd: root, all: true, yes: true, print: (line) => makeApiOutput.push(line) })
  return { initOutput, makeApiOutput, main: readFileSync(join(root, 'src/main.ts'), 'utf8') }
}

describe('kilnjs init + make:api --all: the written entry point type-checks', () => {
  const users = makeApp('users', USERS_SCHEMA)
  const notes = makeApp('notes', NOTES_SCHEMA)
  let withPasswords: Awaited<ReturnType<typeof initAndGenerate>>
  let withoutPasswords: Awaited<ReturnType<typeof initAndGenerate>>

  beforeAll(async () => {
    withPasswords = await initAndGenerate(users, 'postgres')
    withoutPasswords = await initAndGenerate(notes, 'sqlite')
  }, 60_000)
  afterAll(() => {
    for (const root of [users, notes]) rmSync(root, { recursive: true, force: true })
  })

  it('passes hashPassword from createPasswordHasher when a model has a password column', () => {
    const { main, makeApiOutput } = withPasswords
    expect(main).toContain(
      "import { createLogger, createRateLimiters, createSharedState, errorHandler, healthRoutes, loadAppConfig, noSniff, requestLog } from 'kilnjs/core'",
    )
    expect(main).toContain("import { createPasswordHasher } from 'kilnjs/session'")
    expect(main).toContain("app.use('*', noSniff(), requestLog({ logger }))")
    expect(main).toContain('apiRoutes({ database, apiKeys, limiters, hashPassword, logger })')
    for (const line of [
      'const passwords = createPasswordHasher()',
      'const hashPassword = (password: string) => passwords.hash(password)',
    ]) {
      expect(main).toContain(line)
    }
    // The file init wrote passes hashPassword already: make:api's next steps do not ask for it.
    const printed = makeApiOutput.join('\n')
    expect(printed).not.toContain('hashPassword')
    expect(printed).not.toContain('Register apiRoutes()')
  })

  it('leaves the hasher out when no model has one, and make:api does not ask for its wiring again', () => {
    const { main, makeApiOutput } = withoutPasswords
    expect(main).not.toMatch(/hashPassword|createPasswordHasher/)
    // The app's logger: /api/v1 writes in the app's format, not a JSON logger of its own.
    expect(main).toContain('apiRoutes({ database, apiKeys, limiters, logger })')
    expect(main).toContain("createDatabase(config.databaseUrl ?? 'sqlite:storage/app.db')")
    // main.ts registers the API and its docs already: make:api prints those steps no more.
    const steps = makeApiOutput.join('\n')
    expect(steps).toContain('Next steps')
    expect(steps).not.toContain('Register apiRoutes()')
    expect(steps).not.toContain('Register docsRoutes()')
  })

  it('reads configuration once and shares limits through Redis behind trusted proxies', () => {
    for (const { main } of [withPasswords, withoutPasswords]) {
      // APP_NAME defaults to the package's name (the consent page, the MCP server's name).
      expect(main).toMatch(
        /const config = loadAppConfig\(process\.env, \{ appName: '(users|notes)' \}\)/,
      )
      expect(main).toContain('docsRoutes({ app, title: config.appName })')
      expect(main).toContain(
        'const logger = createLogger({ level: config.logLevel, format: config.logFormat })',
      )
      expect(main).toContain('commandTimeoutMs: config.redisCommandTimeoutMs,')
      expect(main).toContain(
        'checks: { database: () => database.ping(), ...(redis ? { redis: () => redis.ping() } : {}) },',
      )
      expect(main).toContain(
        'createRateLimiters({ trustProxy: config.trustProxy, redis: shared.client, logger })',
      )
      expect(main).toContain("app.use('*', noSniff(), requestLog({ logger }))")
      // The environment is read once, by loadAppConfig.
      expect(main).not.toMatch(/process\.env\./)
    }
  })

  it('tsc --noEmit (strict) on both apps, main.ts included', async () => {
    const config = join(repo, 'tmp', `tsconfig.init-${process.pid}.json`)
    writeFileSync(
      config,
      JSON.stringify({
        extends: '../tsconfig.json',
        include: [users, notes].map((root) => `${relative(join(repo, 'tmp'), root)}/src/**/*.ts`),
        exclude: [],
      }),
    )
    try {
      const result = await run('npx', ['tsc', '--noEmit', '-p', config], { cwd: repo }).catch(
        (error: { stdout: string }) => error,
      )
      expect(String(result.stdout)).toBe('')
    } finally {
      rmSync(config, { force: true })
    }
  }, 120_000)
})
