import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  ApiKeyRejectedError,
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
  listApiKeys,
} from '../../src/api/index.ts'
import { insertKeyRow } from '../../src/api/provider/key-store.ts'
import { CliError } from '../../src/cli/cli-error.ts'
import { runApiKeyList } from '../../src/cli/commands/api-key-list.ts'
import { runApiKeyRevoke } from '../../src/cli/commands/api-key-revoke.ts'
import { parseExpiry, runMakeApiKey } from '../../src/cli/commands/make-api-key.ts'
import { ManualClock } from '../../src/core/index.ts'
import { createDatabase, migrate } from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { execSql, keyWithPrefix, migratedDatabase } from './support.ts'

const root = resolve(import.meta.dirname, '../..')
const sqliteFixture = join(root, 'test/fixtures/sqlite-app')
const RAW_KEY = /kl_(live|test)_[0-9A-Za-z]{43}/

/** Printed lines without colours (picocolors colours them under CI=true). */
function capture() {
  const lines: string[] = []
  return {
    print: (line: string) => lines.push(stripVTControlCharacters(line)),
    text: () => lines.join('\n'),
  }
}

/** Runs `node bin/kiln.js <args>` as a user would, without colours. */
function kiln(args: string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(root, 'bin/kiln.js'), ...args],
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...options.env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        done({ code, stdout, stderr })
      },
    )
  })
}

describeEachDatabase('kilnjs make:api-key prints SQL that works', (backend) => {
  let test: TestDatabase
  let provider: DatabaseApiKeyProvider
  beforeAll(async () => {
    test = await migratedDatabase(backend)
    provider = createDatabaseApiKeyProvider({ database: test.database })
  })
  afterAll(async () => {
    await provider.close()
    await test.cleanup()
  })

  it('prints a key, its prefix and hash, and an INSERT that stores a usable record', async () => {
    const out = capture()
    const name = `O'Brien's "bot" \\ ; DROP TABLE api_keys; --`
    const made = await runMakeApiKey(name, {
      dialect: backend.dialect,
      scopes: 'posts:read, admin ,posts:read',
      expires: '30d',
      print: out.print,
    })
    expect(made.rawKey).toMatch(/^kl_live_[0-9A-Za-z]{43}$/)
    expect(out.text()).toContain(`Key:         ${made.rawKey}`)
    expect(out.text()).toContain(`Prefix:      ${made.prefix}`)
    expect(out.text()).toContain(`Hashed key:  ${made.hashedKey}`)
    expect(out.text()).toContain(made.sql)
    expect(out.text()).toContain(backend.dialect === 'postgres' ? 'apiKeysPg' : 'apiKeysSqlite')
    // The key appears exactly once in the output.
    expect(out.text().split(made.rawKey)).toHaveLength(2)
    await execSql(test.database, made.sql)
    expect(await provider.verifyKey(made.rawKey)).toMatchObject({
      name,
      scopes: ['posts:read', 'admin'],
    })
    const [record] = (await listApiKeys(test.database)).filter((k) => k.prefix === made.prefix)
    const days = (record!.expiresAt!.getTime() - record!.createdAt.getTime()) / 86_400_000
    expect(days).toBe(30)
  })

  it('without --scopes mints a key with every scope (*) and says so', async () => {
    const lines: string[] = []
    const made = await runMakeApiKey('plain', {
      dialect: backend.dialect,
      env: 'test',
      print: (line) => lines.push(stripVTControlCharacters(line)),
    })
    expect(made.rawKey.startsWith('kl_test_')).toBe(true)
    await execSql(test.database, made.sql)
    expect((await provider.verifyKey(made.rawKey)).scopes).toEqual(['*'])
    expect(lines).toContain(
      '  Scopes:      * (every scope; narrow it with --scopes posts:read,posts:write)',
    )
  })
})

describe('kilnjs make:api-key checks scopes against the routes', () => {
  const demoApi = relative(process.cwd(), join(root, 'examples/demo/src/api'))
  const known =
    'comments:read, comments:write, messages:read, messages:write, posts:read, posts:write, users:read, users:write'

  it('warns about a scope no route requires and lists the known ones, and still makes the key', async () => {
    const out = capture()
    const made = await runMakeApiKey('ci', {
      cwd: root,
      scopes: 'post:read,posts:write,admin',
      print: out.print,
    })
    expect(made.rawKey).toMatch(RAW_KEY)
    expect(out.text()).toContain(
      `! No route of the API in ${demoApi} requires post:read, admin.\n  Known scopes: ${known}\n`,
    )
  })

  it('says nothing for scopes the routes use, or for *', async () => {
    for (const scopes of ['posts:read,comments:write', '*', undefined]) {
      const out = capture()
      await runMakeApiKey('ci', { cwd: root, scopes, print: out.print })
      expect(out.text()).toContain('Prefix:')
      expect(out.text()).not.toContain('No route')
    }
  })
})

describe('kilnjs make:api-key refuses bad input', () => {
  const cases: [string, string, Parameters<typeof runMakeApiKey>[1]][] = [
    ['an empty name', '', {}],
    ['a name with a newline', 'a\nb', {}],
    ['a name of 256 characters', 'x'.repeat(256), {}],
    ['an unknown env', 'ci', { env: 'prod' }],
    ['a scope with a space', 'ci', { scopes: 'posts read' }],
    ['a scope with a quote', 'ci', { scopes: "a'b" }],
    ['an expiry in the past', 'ci', { expires: '2001-01-01' }],
    ['an expiry of zero', 'ci', { expires: '0d' }],
    ['an unknown unit', 'ci', { expires: '3 days' }],
    ['a date that does not exist', 'ci', { expires: '2030-02-31x' }],
    ['an unknown dialect', 'ci', { dialect: 'mysql' }],
  ]
  for (const [label, name, options] of cases) {
    it(label, async () => {
      const out = capture()
      const error = await runMakeApiKey(name, {
        dialect: 'sqlite',
        ...options,
        print: out.print,
      }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(CliError)
      expect(out.text()).toBe('')
    })
  }

  it('parses durations and dates for --expires', () => {
    const now = Date.UTC(2026, 0, 1)
    expect(parseExpiry('90m', now).getTime()).toBe(now + 90 * 60_000)
    expect(parseExpiry('12h', now).getTime()).toBe(now + 12 * 3_600_000)
    expect(parseExpiry('2w', now).getTime()).toBe(now + 14 * 86_400_000)
    expect(parseExpiry('1y', now).getTime()).toBe(now + 365 * 86_400_000)
    expect(parseExpiry('2027-01-31', now).toISOString()).toBe('2027-01-31T00:00:00.000Z')
    expect(parseExpiry('2027-01-31T12:00:00+02:00', now).toISOString()).toBe(
      '2027-01-31T10:00:00.000Z',
    )
  })
})

describeEachDatabase(
  'kilnjs make:api-key --save, api-key:list, api-key:revoke',
  (backend) => {
    let test: TestDatabase
    const clock = new ManualClock(Date.UTC(2026, 0, 1))
    // The repository root is a Postgres app; the SQLite fixture app is the SQLite one.
    const cwd = backend.dialect === 'postgres' ? root : sqliteFixture
    let dir: string
    let url: string
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kiln-keys-cli-'))
      if (backend.dialect === 'sqlite') {
        url = `sqlite:${join(dir, 'app.db')}`
        const database = await createDatabase(url)
        await migrate(database, { logger: { info: () => {}, warn: () => {} } })
        test = { database, url, cleanup: () => database.close() }
      } else {
        test = await migratedDatabase(backend)
        url = test.url!
      }
    })
    afterAll(async () => {
      await test.cleanup()
      await rm(dir, { recursive: true, force: true })
    })
    beforeEach(() => execSql(test.database, 'DELETE FROM api_keys'))
    const processEnv = () => ({ DATABASE_URL: url })

    it('--save inserts the record and prints no SQL', async () => {
      const out = capture()
      const made = await runMakeApiKey('ci', {
        save: true,
        scopes: 'a,b',
        cwd,
        processEnv: processEnv(),
        clock,
        print: out.print,
      })
      expect(made.id).toBeTypeOf('number')
      expect(out.text()).toContain(`Saved as API key ${made.id}`)
      expect(out.text()).not.toContain('INSERT INTO')
      const provider = createDatabaseApiKeyProvider({ database: test.database })
      expect(await provider.verifyKey(made.rawKey)).toEqual({
        id: made.id,
        name: 'ci',
        scopes: ['a', 'b'],
      })
      await provider.close()
    })

    it('api-key:list shows every key and its status, never a key or a hash', async () => {
      const active = await createApiKey(test.database, { name: 'active', scopes: ['x'], clock })
      const revoked = await createApiKey(test.database, { name: 'revoked', clock })
      const expired = await createApiKey(test.database, {
        name: 'expired',
        expiresAt: new Date(clock.now() - 1),
        clock,
      })
      await execSql(
        test.database,
        `UPDATE api_keys SET revoked_at = created_at WHERE id = ${revoked.record.id}`,
      )
      const out = capture()
      await runApiKeyList({ cwd, processEnv: processEnv(), clock, print: out.print })
      const lines = out.text().split('\n')
      expect(lines[0]).toMatch(
        /^ID\s+NAME\s+PREFIX\s+SCOPES\s+STATUS\s+CREATED\s+LAST USED\s+EXPIRES$/,
      )
      expect(lines[1]).toMatch(
        new RegExp(`^${active.record.id}\\s+active\\s+${active.prefix}\\s+x\\s+active\\s`),
      )
      expect(lines[2]).toMatch(/\srevoked\s+2026-01-01T00:00:00Z/)
      expect(lines[3]).toMatch(/\sexpired\s/)
      for (const key of [active, revoked, expired]) {
        expect(out.text()).not.toContain(key.hashedKey)
        expect(out.text()).not.toContain(key.rawKey)
      }
      const json = capture()
      await runApiKeyList({ json: true, cwd, processEnv: processEnv(), clock, print: json.print })
      const parsed = JSON.parse(json.text()) as { status: string; name: string }[]
      expect(parsed.map((k) => [k.name, k.status])).toEqual([
        ['active', 'active'],
        ['revoked', 'revoked'],
        ['expired', 'expired'],
      ])
      expect(json.text()).not.toMatch(/hashed|[0-9a-f]{64}/)
    })

    it('api-key:list says when there are no keys', async () => {
      const out = capture()
      await runApiKeyList({ cwd, processEnv: processEnv(), print: out.print })
      expect(out.text()).toBe('No API keys yet. Make one with: kilnjs make:api-key <name> --save')
    })

    it('api-key:revoke by id, by prefix and by the key itself; a running instance refuses it', async () => {
      // A running app instance with its own connection, which has verified and cached each key.
      const instance = await createDatabase(url, {
        poolMax: 2,
        directUrl: test.directUrl,
        logger: { info: () => {} },
      })
      const provider = createDatabaseApiKeyProvider({ database: instance })
      try {
        await vi.waitFor(() => expect(provider.status().changeFeed).toBe('live'))
        const keys = await Promise.all(
          ['by-id', 'by-prefix', 'by-key'].map((name) => createApiKey(test.database, { name })),
        )
        for (const key of keys) await provider.verifyKey(key.rawKey)
        expect(provider.status().cacheEntries).toBe(3)
        const [byId, byPrefix, byKey] = keys as [
          (typeof keys)[0],
          (typeof keys)[0],
          (typeof keys)[0],
        ]
        const out = capture()
        const options = { cwd, processEnv: processEnv(), clock, print: out.print }
        await runApiKeyRevoke(String(byId.record.id), options)
        await runApiKeyRevoke(byPrefix.prefix, options)
        await runApiKeyRevoke(byKey.rawKey, options)
        expect(out.text()).toContain(`Revoked API key ${byId.record.id} (by-id, ${byId.prefix})`)
        expect(out.text()).not.toMatch(RAW_KEY)
        for (const key of keys) {
          // SQLite: at once (data_version). Postgres: when the NOTIFY lands.
          await vi.waitFor(async () => {
            const error = await provider.verifyKey(key.rawKey).catch((caught: unknown) => caught)
            expect(error).toBeInstanceOf(ApiKeyRejectedError)
            expect((error as ApiKeyRejectedError).reason).toBe('revoked')
          })
        }
        const again = capture()
        const result = await runApiKeyRevoke(String(byId.record.id), {
          ...options,
          print: again.print,
        })
        expect(result.changed).toBe(false)
        expect(again.text()).toBe(
          `API key ${byId.record.id} (by-id, ${byId.prefix}) was already revoked at 2026-01-01T00:00:00Z`,
        )
      } finally {
        await provider.close()
        await instance.close()
      }
    })

    it('api-key:revoke refuses unknown ids, unknown prefixes, garbage and ambiguous prefixes', async () => {
      const options = { cwd, processEnv: processEnv(), print: () => {} }
      const message = (target: string) =>
        runApiKeyRevoke(target, options).then(
          () => 'no error',
          (error: unknown) =>
            error instanceof CliError ? error.message : `not a CliError: ${error}`,
        )
      expect(await message('424242')).toBe('No API key with id 424242')
      expect(await message('kl_live_AAAAAAAA')).toBe('No API key with prefix kl_live_AAAAAAAA')
      expect(await message('drop table')).toMatch(/^Name the key by its id/)
      const first = await createApiKey(test.database, { name: 'one' })
      const twin = keyWithPrefix(first.prefix)
      const second = await insertKeyRow(test.database, {
        name: 'two',
        prefix: first.prefix,
        hashedKey: twin.hashedKey,
        scopes: null,
        expiresAt: null,
        createdAt: new Date(),
      })
      expect(await message(first.prefix)).toBe(
        `Several keys share prefix ${first.prefix} (ids ${first.record.id}, ${second.id}): revoke by id`,
      )
      // Nothing was revoked by any of these.
      for (const key of await listApiKeys(test.database)) expect(key.revokedAt).toBeNull()
      // The raw key of one of the twins picks exactly that one.
      await runApiKeyRevoke(twin.rawKey, options)
      const after = await listApiKeys(test.database)
      expect(after.find((k) => k.id === second.id)?.revokedAt).not.toBeNull()
      expect(after.find((k) => k.id === first.record.id)?.revokedAt).toBeNull()
    })
  },
  { only: ['sqlite', 'postgres'] },
)

describe('the kiln binary', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-keys-bin-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('mints, saves, lists and revokes keys on a SQLite app', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'app.db')}` }
    const unmigrated = await kiln(['make:api-key', 'ci', '--save'], { cwd: sqliteFixture, env })
    expect(unmigrated.code).toBe(1)
    expect(unmigrated.stderr.trim()).toBe(
      `DATABASE_URL (sqlite:${join(dir, 'app.db')}) has no api_keys table yet: run \`kilnjs migrate\` first`,
    )
    expect((await kiln(['migrate'], { cwd: sqliteFixture, env })).code).toBe(0)
    const made = await kiln(['make:api-key', 'ci', '--save', '--scopes', 'posts:read'], {
      cwd: sqliteFixture,
      env,
    })
    expect(made.stderr).toBe('')
    expect(made.code).toBe(0)
    expect(made.stdout).toMatch(/Saved as API key 1 in DATABASE_URL/)
    const rawKey = RAW_KEY.exec(made.stdout)?.[0]
    expect(rawKey).toBeDefined()
    const listed = await kiln(['api-key:list'], { cwd: sqliteFixture, env })
    expect(listed.stdout).toMatch(/^1\s+ci\s+kl_live_\w{8}\s+posts:read\s+active/m)
    expect(listed.stdout).not.toContain(rawKey)
    const revoked = await kiln(['api-key:revoke', '1'], { cwd: sqliteFixture, env })
    expect(revoked.stdout).toContain('Revoked API key 1 (ci,')
  }, 180_000)

  it('api:check without @apidevtools/swagger-parser says what to install, in one line', async () => {
    // The app has not installed the optional peer: Node's resolver does not find it.
    const hooks = join(dir, 'hooks.mjs')
    await writeFile(
      hooks,
      `export async function resolve(specifier, context, next) {
  if (specifier === '@apidevtools/swagger-parser') {
    const error = new Error(\`Cannot find package '\${specifier}' imported from \${context.parentURL}\`)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}
`,
    )
    const hide = join(dir, 'hide.mjs')
    await writeFile(
      hide,
      `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`,
    )
    // A server that answers with an OpenAPI document, so that the check gets to validating it.
    const server = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }),
      )
    })
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
    const { port } = server.address() as AddressInfo
    const run = await kiln(
      ['api:check', '--api-key', 'kl_test_x', '--url', `http://127.0.0.1:${port}`],
      { cwd: root, env: { NODE_OPTIONS: `--import=${pathToFileURL(hide).href}` } },
    ).finally(() => server.close())
    expect(run.stderr.trim()).toBe(
      'kilnjs api:check needs the package @apidevtools/swagger-parser, which is not installed: npm install @apidevtools/swagger-parser',
    )
    expect(run.stdout).toBe('')
    expect(run.code).toBe(1)
  }, 60_000)

  it('prints SQL for the configured dialect without touching a database', async () => {
    const run = await kiln(['make:api-key', 'ci'], { cwd: sqliteFixture, env: {} })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('SQL (SQLite):')
    const pg = await kiln(['make:api-key', 'ci'], { cwd: root, env: {} })
    expect(pg.stdout).toContain('SQL (PostgreSQL):')
  }, 60_000)
})
