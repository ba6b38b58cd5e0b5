import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { promisify, stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isExcludedField, when } from '../../src/api/index.ts'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'
import { CliError } from '../../src/cli/index.ts'
import { AUTO_EXCLUDED_FIELDS } from '../../src/core/credentials.ts'
import { libraryMigrationsDir } from '../../src/db/index.ts'
import { scaffoldApp, TRASH } from '../api/rest/generated-app.ts'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')

/** A temporary app with a hand-written schema, under the repository so imports resolve. */
function makeApp(name: string, schema: string, dialect: 'postgres' | 'sqlite' = 'postgres') {
  const root = join(repo, 'tmp', `scaffold-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src'), { recursive: true })
  mkdirSync(join(root, 'migrations'))
  writeFileSync(join(root, 'migrations/0001_init.sql'), '-- the app tables\n')
  writeFileSync(join(root, 'src/schema.ts'), schema)
  writeFileSync(
    join(root, 'kiln.config.ts'),
    `import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: '${dialect}', schema: './src/schema.ts', out: './src/api', migrations: './migrations' })\n`,
  )
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

const SECRETS_SCHEMA = `import { integer, pgTable, serial, text, varchar } from 'drizzle-orm/pg-core'

export const accounts = pgTable('accounts', {
  id: serial('id').primaryKey(),
  email: varchar('email', { length: 255 }).notNull(),
  password: varchar('password', { length: 255 }).notNull(),
  passwordHash: text('password_hash'),
  hashedPassword: text('hashed_password'),
  secret: text('secret'),
  Token: text('Token'),
  apiKey: text('api_key'),
  hashedKey: text('hashed_key'),
  rememberToken: text('remember_token'),
  tokenCount: integer('token_count').notNull().default(0),
  nickname: text('nickname'),
  internalNotes: text('internal_notes'),
})

export const customerSubscriptionInvoices = pgTable('customer_subscription_invoices', {
  id: serial('id').primaryKey(),
  description: varchar('description', { length: 500 }).notNull(),
  quantityOrderedByTheCustomerAtCheckoutTime: integer('quantity_ordered_by_the_customer_at_checkout_time').notNull(),
})
`

function print() {
  const lines: string[] = []
  return { lines, print: (line: string) => lines.push(line) }
}

describe('kilnjs make:api', () => {
  const app = makeApp('main', SECRETS_SCHEMA)
  afterAll(() => app.cleanup())

  it('fails for unknown models, naming the known ones', async () => {
    const error = await runMakeApi({
      cwd: app.root,
      models: ['Nope'],
      yes: true,
      print: () => {},
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    expect((error as Error).message).toBe(
      'Unknown model(s): Nope. Known models: Account, CustomerSubscriptionInvoice',
    )
    await expect(runMakeApi({ cwd: app.root, yes: true, print: () => {} })).rejects.toThrow(/--all/)
    expect(existsSync(join(app.root, 'src/api'))).toBe(false)
  })

  it('lists the files and writes nothing when the confirmation is declined', async () => {
    const out = print()
    let asked = ''
    const result = await runMakeApi({
      cwd: app.root,
      all: true,
      print: out.print,
      confirm: async (message) => {
        asked = message
        return false
      },
    })
    expect(asked).toBe('Write 10 file(s)?')
    expect(result.written).toEqual([])
    // Listed as what would be written: `create` is said only of a file written.
    expect(out.lines.join('\n')).toContain('  new    ')
    expect(out.lines.join('\n')).not.toContain('create')
    expect(existsSync(join(app.root, 'src/api'))).toBe(false)
  })

  it('writes controller, resource and requests per model, the app files once, and the wiring steps', async () => {
    const out = print()
    const result = await runMakeApi({ cwd: app.root, all: true, yes: true, print: out.print })
    const written = result.written.map((file) => relative(app.root, file)).sort()
    expect(written).toEqual(
      [
        'migrations/0002_api_keys.sql',
        'src/api/api-keys.ts',
        'src/api/controllers/accounts.ts',
        'src/api/controllers/customer-subscription-invoices.ts',
        'src/api/index.ts',
        'src/api/requests/account.ts',
        'src/api/requests/customer-subscription-invoice.ts',
        'src/api/resources/account.ts',
        'src/api/resources/customer-subscription-invoice.ts',
        'src/api/routes.ts',
      ].sort(),
    )
    const text = out.lines.join('\n')
    for (const step of [
      'apiRoutes(',
      'docsRoutes(',
      'apiKeyProvider(',
      'kilnjs migrate',
      'make:api-key',
    ]) {
      expect(text).toContain(step)
    }
    const controller = readFileSync(join(app.root, 'src/api/controllers/accounts.ts'), 'utf8')
    for (const handler of ['index', 'show', 'store', 'update', 'destroy']) {
      expect(controller).toContain(`async function ${handler}(c)`)
    }
  })

  it('the migration is kiln’s own api_keys migration (CREATE TABLE IF NOT EXISTS)', () => {
    const generated = readFileSync(join(app.root, 'migrations/0002_api_keys.sql'), 'utf8')
    const dir = libraryMigrationsDir('postgres')
    const own = readdirSync(dir).find((file) => file.endsWith('_api_keys.sql'))!
    expect(generated).toBe(readFileSync(join(dir, own), 'utf8'))
    expect(generated).toContain('CREATE TABLE IF NOT EXISTS "api_keys"')
  })

  it('excludes secret-like fields by whole name, case-insensitive; keeps token_count', () => {
    const resource = readFileSync(join(app.root, 'src/api/resources/account.ts'), 'utf8')
    const schemaBlock = resource.slice(resource.indexOf('z.object({'), resource.indexOf('})'))
    const fields = [...schemaBlock.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1])
    expect(fields).toEqual(['id', 'email', 'token_count', 'nickname', 'internal_notes'])
    expect(resource).toContain(
      'Left out: `password`, `password_hash`, `hashed_password`, `secret`, `Token`, `api_key`, `hashed_key`, `remember_token`.',
    )
  })

  it('derives request rules from the columns', () => {
    const request = readFileSync(join(app.root, 'src/api/requests/account.ts'), 'utf8')
    expect(request).toContain('email: z.email().max(255),')
    expect(request).toContain('password: z.string().min(8).max(256),')
    expect(request).toContain('token_count: z.int32(),')
    expect(request).toContain('nickname: z.string().nullable(),')
    expect(request).toMatch(/\.partial\(\{[^)]*token_count: true/)
    expect(request).not.toMatch(/\.partial\(\{[^)]*email: true/)
  })

  it('never overwrites: existing files are skipped with an informational line', async () => {
    const file = join(app.root, 'src/api/controllers/accounts.ts')
    writeFileSync(file, '// customized by hand\n')
    const out = print()
    const result = await runMakeApi({ cwd: app.root, all: true, yes: true, print: out.print })
    expect(result.written).toEqual([])
    expect(readFileSync(file, 'utf8')).toBe('// customized by hand\n')
    expect(out.lines.join('\n')).toContain('Nothing to write: every file exists.')
    rmSync(join(app.root, 'src/api/resources/account.ts'))
    const again = print()
    const second = await runMakeApi({
      cwd: app.root,
      models: ['Account'],
      yes: true,
      print: again.print,
    })
    expect(second.written.map((f) => relative(app.root, f))).toEqual([
      'src/api/resources/account.ts',
    ])
    expect(
      again.lines.some((line) => line.includes('controllers/accounts.ts exists: left as it is')),
    ).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe('// customized by hand\n')
  })
})

describe('adding a model to an existing API', () => {
  it('updates routes.ts (imports, route, apiResources) and index.ts in place, as --all writes them', async () => {
    const app = makeApp('add', SECRETS_SCHEMA)
    const fresh = makeApp('add-all', SECRETS_SCHEMA)
    try {
      await runMakeApi({ cwd: app.root, models: ['Account'], yes: true, print: () => {} })
      const out = print()
      const result = await runMakeApi({
        cwd: app.root,
        models: ['CustomerSubscriptionInvoice'],
        yes: true,
        print: out.print,
      })
      const written = result.written.map((file) => relative(app.root, file)).sort()
      expect(written).toEqual([
        'src/api/controllers/customer-subscription-invoices.ts',
        'src/api/index.ts',
        'src/api/requests/customer-subscription-invoice.ts',
        'src/api/resources/customer-subscription-invoice.ts',
        'src/api/routes.ts',
      ])
      expect(out.lines.join('\n')).toMatch(/update .*src\/api\/routes\.ts/)
      await runMakeApi({ cwd: fresh.root, all: true, yes: true, print: () => {} })
      for (const file of ['src/api/routes.ts', 'src/api/index.ts']) {
        expect(readFileSync(join(app.root, file), 'utf8'), file).toBe(
          readFileSync(join(fresh.root, file), 'utf8'),
        )
      }
    } finally {
      app.cleanup()
      fresh.cleanup()
    }
  })

  it('a model added later is includable from the existing resources, with no edit to them', async () => {
    const tools = `import { date, integer, pgTable, serial, text } from 'drizzle-orm/pg-core'

export const tools = pgTable('tools', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
})
`
    const bookings = `${tools}
export const bookings = pgTable('bookings', {
  id: serial('id').primaryKey(),
  toolId: integer('tool_id').notNull().references(() => tools.id),
  startsOn: date('starts_on').notNull(),
})
`
    const app = makeApp('add-related', tools)
    const legacy = makeApp('add-related-legacy', tools)
    const fresh = makeApp('add-related-all', bookings)
    try {
      await runMakeApi({ cwd: app.root, models: ['Tool'], yes: true, print: () => {} })
      await runMakeApi({ cwd: legacy.root, models: ['Tool'], yes: true, print: () => {} })
      const toolsController = readFileSync(join(app.root, 'src/api/controllers/tools.ts'), 'utf8')
      writeFileSync(join(app.root, 'src/schema.ts'), bookings)
      const out = print()
      await runMakeApi({ cwd: app.root, models: ['Booking'], yes: true, print: out.print })
      await runMakeApi({ cwd: fresh.root, all: true, yes: true, print: () => {} })
      const controller = 'src/api/controllers/bookings.ts'
      expect(readFileSync(join(app.root, controller), 'utf8')).toBe(
        readFileSync(join(fresh.root, controller), 'utf8'),
      )
      // The existing controller is left as it is: its definition follows the schema.
      expect(readFileSync(join(app.root, 'src/api/controllers/tools.ts'), 'utf8')).toBe(
        toolsController,
      )
      expect(stripVTControlCharacters(out.lines.join('\n'))).toMatch(
        /ℹ \S*src\/api\/controllers\/tools\.ts includes bookings now: its defineResource takes relations from the schema's foreign keys/,
      )
      // Run again with --all (the tools controller is then one of the chosen models): the same line.
      const loans = `
export const loans = pgTable('loans', {
  id: serial('id').primaryKey(),
  toolId: integer('tool_id').notNull().references(() => tools.id),
})
`
      writeFileSync(join(app.root, 'src/schema.ts'), bookings + loans)
      const again = print()
      await runMakeApi({ cwd: app.root, all: true, yes: true, print: again.print })
      expect(stripVTControlCharacters(again.lines.join('\n'))).toMatch(
        /ℹ \S*src\/api\/controllers\/tools\.ts includes loans now/,
      )
      // A controller of kiln 0.1 (defineListQuery) names its relations: the run says what to add.
      const legacyPath = join(legacy.root, 'src/api/controllers/tools.ts')
      writeFileSync(legacyPath, toolsController.replace('defineResource(', 'defineListQuery('))
      writeFileSync(join(legacy.root, 'src/schema.ts'), bookings)
      const legacyOut = print()
      await runMakeApi({ cwd: legacy.root, models: ['Booking'], yes: true, print: legacyOut.print })
      expect(stripVTControlCharacters(legacyOut.lines.join('\n'))).toMatch(
        /ℹ \S*src\/api\/controllers\/tools\.ts could now include bookings: add to the include of its defineListQuery \(with hasMany from 'kilnjs\/api' and bookings from the schema\):\n {4}bookings: hasMany\(bookings, bookings\.toolId, tools\.id\),/,
      )
    } finally {
      app.cleanup()
      legacy.cleanup()
      fresh.cleanup()
    }
  })

  it('prints the complete edit when routes.ts was reshaped by hand, and leaves it alone', async () => {
    const app = makeApp('add-manual', SECRETS_SCHEMA)
    try {
      await runMakeApi({ cwd: app.root, models: ['Account'], yes: true, print: () => {} })
      const routes = join(app.root, 'src/api/routes.ts')
      const handmade = readFileSync(routes, 'utf8').replace(
        "    .route('/accounts', accountsController(context))",
        "    .route('/accounts', accountsController(context)) // mine",
      )
      writeFileSync(routes, handmade)
      const out = print()
      await runMakeApi({
        cwd: app.root,
        models: ['CustomerSubscriptionInvoice'],
        yes: true,
        print: out.print,
      })
      expect(readFileSync(routes, 'utf8')).toBe(handmade)
      const text = out.lines.join('\n')
      expect(text).toContain('routes.ts was changed by hand: add these lines to it yourself:')
      for (const line of [
        'customerSubscriptionInvoicesController,',
        'customerSubscriptionInvoicesResource,',
        "} from './controllers/customer-subscription-invoices.js'",
        ".route('/customer_subscription_invoices', customerSubscriptionInvoicesController(context))",
        "name: 'customer_subscription_invoices',",
        'schema: CustomerSubscriptionInvoiceResource,',
      ]) {
        expect(text).toContain(line)
      }
    } finally {
      app.cleanup()
    }
  })
})

describe('the next steps', () => {
  it("name only what the app's modules do not do yet", async () => {
    const app = makeApp('wired', SECRETS_SCHEMA)
    const main = join(app.root, 'src/main.ts')
    const wired = (deps: string) =>
      writeFileSync(
        main,
        `import { apiRoutes, docsRoutes } from './api/index.js'\napp.route('/', apiRoutes({ ${deps} }))\napp.route('/', docsRoutes({ app, title: 'Mine' }))\n`,
      )
    try {
      wired('database, apiKeys, limiters')
      const first = print()
      await runMakeApi({ cwd: app.root, models: ['Account'], yes: true, print: first.print })
      const steps = (lines: string[]) => {
        const text = stripVTControlCharacters(lines.join('\n'))
        return text
          .slice(text.indexOf('Next steps'))
          .split('\n')
          .filter((line) => /^ {2}\d\./.test(line))
      }
      expect(steps(first.lines)).toEqual([
        '  1. Pass hashPassword to apiRoutes(): a password of these models is stored hashed:',
        "  2. Create your tables and kiln's: npx drizzle-kit generate, then npx kilnjs migrate",
        '  3. Mint a key: npx kilnjs make:api-key <name> --save  (scopes * unless --scopes)',
      ])
      wired('database, apiKeys, limiters, hashPassword')
      const second = print()
      await runMakeApi({
        cwd: app.root,
        models: ['CustomerSubscriptionInvoice'],
        yes: true,
        print: second.print,
      })
      expect(steps(second.lines)).toEqual([
        "  1. Create your tables and kiln's: npx drizzle-kit generate, then npx kilnjs migrate",
        '  2. A key calls the new routes with customer_subscription_invoices:read, customer_subscription_invoices:write (or *): npx kilnjs make:api-key <name> --save --scopes customer_subscription_invoices:read,customer_subscription_invoices:write',
      ])
    } finally {
      app.cleanup()
    }
  })
})

describe("the api_keys migration in drizzle-kit's folder", () => {
  const tools = `import { pgTable, serial, text } from 'drizzle-orm/pg-core'

export const tools = pgTable('tools', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
})
`
  const drizzleKit = join(repo, 'node_modules/.bin/drizzle-kit')

  /** An app whose migrations folder is drizzle-kit's `out`, as `kilnjs init` sets one up. */
  function drizzleApp(name: string) {
    const app = makeApp(name, tools)
    rmSync(join(app.root, 'migrations'), { recursive: true })
    writeFileSync(
      join(app.root, 'kiln.config.ts'),
      "import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: 'postgres', schema: './src/schema.ts', out: './src/api', migrations: './drizzle' })\n",
    )
    writeFileSync(
      join(app.root, 'drizzle.config.ts'),
      "import { defineConfig } from 'drizzle-kit'\nexport default defineConfig({ dialect: 'postgresql', schema: './src/schema.ts', out: './drizzle' })\n",
    )
    return app
  }

  /** The schema gains a column, and drizzle-kit writes its migration. */
  async function changeSchema(root: string, column: string) {
    const schema = readFileSync(join(root, 'src/schema.ts'), 'utf8')
    writeFileSync(
      join(root, 'src/schema.ts'),
      schema.replace(
        "  name: text('name').notNull(),\n",
        (line) => `${line}  ${column}: text('${column}'),\n`,
      ),
    )
    await run(drizzleKit, ['generate'], { cwd: root })
  }

  function numbers(root: string): string[] {
    return readdirSync(join(root, 'drizzle'))
      .filter((file) => file.endsWith('.sql'))
      .map((file) => file.slice(0, 4))
  }

  it('make:api before drizzle-kit generate: recorded in its journal, no number used twice', async () => {
    const app = drizzleApp('drizzle-first')
    try {
      const out = print()
      await runMakeApi({ cwd: app.root, all: true, yes: true, print: out.print })
      expect(out.lines.join('\n')).toMatch(/create \S*drizzle\/meta\/_journal\.json/)
      await run(drizzleKit, ['generate'], { cwd: app.root })
      await changeSchema(app.root, 'brand')
      const files = readdirSync(join(app.root, 'drizzle')).filter((file) => file.endsWith('.sql'))
      expect(files).toContain('0000_api_keys.sql')
      expect(files).toHaveLength(3)
      expect(new Set(numbers(app.root)).size).toBe(3)
      const journal = JSON.parse(readFileSync(join(app.root, 'drizzle/meta/_journal.json'), 'utf8'))
      expect(journal.entries.map((entry: { idx: number }) => entry.idx)).toEqual([0, 1, 2])
    } finally {
      app.cleanup()
    }
  }, 120_000)

  it('make:api after drizzle-kit generate: numbered after its journal, no number used twice', async () => {
    const app = drizzleApp('drizzle-after')
    try {
      await run(drizzleKit, ['generate'], { cwd: app.root })
      const out = print()
      await runMakeApi({ cwd: app.root, all: true, yes: true, print: out.print })
      expect(out.lines.join('\n')).toMatch(/update \S*drizzle\/meta\/_journal\.json/)
      expect(existsSync(join(app.root, 'drizzle/0001_api_keys.sql'))).toBe(true)
      await changeSchema(app.root, 'brand')
      await changeSchema(app.root, 'colour')
      expect(numbers(app.root)).toHaveLength(4)
      expect(new Set(numbers(app.root)).size).toBe(4)
    } finally {
      app.cleanup()
    }
  }, 120_000)
})

describe('exclusion flags', () => {
  it('--exclude stacks with the automatic exclusion; --include-all keeps --exclude', async () => {
    const app = makeApp('flags', SECRETS_SCHEMA)
    try {
      await runMakeApi({
        cwd: app.root,
        models: ['accounts'],
        yes: true,
        exclude: ['nickname', 'INTERNAL_NOTES'],
        print: () => {},
      })
      const stacked = readFileSync(join(app.root, 'src/api/resources/account.ts'), 'utf8')
      expect(stacked).not.toMatch(/^ {2}(nickname|internal_notes|password|secret):/m)
      expect(stacked).toMatch(/^ {2}token_count:/m)
      rmSync(join(app.root, 'src/api'), { recursive: true })
      await runMakeApi({
        cwd: app.root,
        models: ['accounts'],
        yes: true,
        includeAll: true,
        exclude: ['secret'],
        print: () => {},
      })
      const all = readFileSync(join(app.root, 'src/api/resources/account.ts'), 'utf8')
      expect(all).toMatch(/^ {2}password:/m)
      expect(all).toMatch(/^ {2}password_hash:/m)
      expect(all).toMatch(/^ {2}remember_token:/m)
      expect(all).not.toMatch(/^ {2}secret:/m)
    } finally {
      app.cleanup()
    }
  })

  it('isExcludedField: whole name, any case, either name of the field', () => {
    for (const name of AUTO_EXCLUDED_FIELDS) {
      expect(isExcludedField(name)).toBe(true)
      expect(isExcludedField(name.toUpperCase())).toBe(true)
    }
    expect(isExcludedField('token_count')).toBe(false)
    expect(isExcludedField('my_password')).toBe(false)
    expect(isExcludedField(['passwordHash', 'password_hash'])).toBe(true)
    expect(isExcludedField('password', { includeAll: true })).toBe(false)
    expect(isExcludedField('bio', { exclude: ['Bio'] })).toBe(true)
    expect(isExcludedField('bio', { exclude: ['bio'], includeAll: true })).toBe(true)
  })

  it('when() adds a conditional field only when its condition holds', () => {
    const resource = (admin: boolean) => ({ id: 1, notes: when(admin, () => 'internal') })
    expect(JSON.parse(JSON.stringify(resource(true)))).toEqual({ id: 1, notes: 'internal' })
    expect(JSON.parse(JSON.stringify(resource(false)))).toEqual({ id: 1 })
    expect(when(1, 'v')).toBe('v')
    expect(when('', 'v')).toBeUndefined()
  })
})

describe('generated code passes the typecheck and the linter', () => {
  const apps: Array<{ root: string; cleanup(): void }> = []
  beforeAll(async () => {
    const long = makeApp('lint', SECRETS_SCHEMA)
    await runMakeApi({ cwd: long.root, all: true, yes: true, print: () => {} })
    apps.push(long, await scaffoldApp('postgres'), await scaffoldApp('sqlite'))
    // A UUID key and soft delete (deleted_at): the bulk and restore handlers of such a model.
    apps.push(
      await scaffoldApp('postgres', { app: TRASH.postgres }),
      await scaffoldApp('sqlite', { app: TRASH.sqlite }),
    )
  })
  afterAll(() => {
    for (const app of apps) app.cleanup()
  })

  it('tsc --noEmit (strict) on the generated files of both dialects', async () => {
    const config = join(repo, 'tmp', `tsconfig.scaffold-${process.pid}.json`)
    writeFileSync(
      config,
      JSON.stringify({
        extends: '../tsconfig.json',
        include: apps.map((app) => `${relative(join(repo, 'tmp'), app.root)}/src/**/*.ts`),
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

  it('biome check (lint + format) on the generated files', async () => {
    const dirs = apps.map((app) => relative(repo, join(app.root, 'src/api')))
    const result = await run('npx', ['biome', 'check', '--vcs-enabled=false', ...dirs], {
      cwd: repo,
    }).catch((error: { stdout: string; stderr: string }) => error)
    const output = `${result.stdout}${result.stderr}`
    expect(output).not.toMatch(/Found \d+ error/)
    expect(output).toMatch(/Checked \d+ files/)
  }, 120_000)
})
