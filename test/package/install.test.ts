import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ok } from '../mcp/support/client.ts'
import { connectThroughConsent, launchChromium } from '../scaffold/support/consent.ts'
import { allowModel, mountAsPrinted } from '../scaffold/support/mcp-app.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import { freePort, type RunningProcess, repoRoot, waitFor } from '../support/processes.ts'
import {
  type AppSpec,
  appEnv,
  createApp,
  keyFrom,
  nativeAddons,
  PEERS,
  run,
} from './support/app.ts'
import { pinnedVersion } from './support/app-lockfile.ts'

/**
 * kiln as a package in an app it did not write: packed once, installed into two new apps
 * outside the repository (a Postgres bookshop, a SQLite notes app) from the npm cache, then
 * taken through the documented path: init, make:api, migrations, a key, init:mcp, a strict
 * type-check, every generated endpoint, the OpenAPI document and api:check, and an assistant
 * (the MCP SDK client) connected through the consent page in headless Chromium. The bookshop runs on the newest
 * versions of kiln's peers, the notes app on the lowest each supported range allows.
 */

const work = mkdtempSync(join(tmpdir(), 'kiln-package-'))
let tarball = ''

/** The person who signs in on the consent page, and the secret that signs their tokens. */
const PERSON = { email: 'ada@example.com', password: 'correct horse battery' }
const SECRET = { MCP_TOKEN_SECRET: 'package-test-secret-0123456789-abcdefgh' }

/**
 * The fixtures have no users table, so the generated module's sign-in hook refuses everyone:
 * the developer writes it, as its comment says; here it knows one person.
 */
function writeSignIn(dir: string): void {
  const file = join(dir, 'src/mcp.ts')
  const hook = 'export const verifyCredentials: VerifyCredentials = async () => undefined'
  const module = readFileSync(file, 'utf8')
  expect(module).toContain(hook)
  writeFileSync(
    file,
    module.replace(
      hook,
      `export const verifyCredentials: VerifyCredentials = async ({ email, password }) =>
  email === '${PERSON.email}' && password === '${PERSON.password}' ? 'ada' : undefined`,
    ),
  )
}

beforeAll(async () => {
  const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version
  // prepack builds dist/: the tarball is what `npm publish` would upload.
  await run(repoRoot, 'npm', ['pack', '--pack-destination', work], appEnv())
  tarball = join(work, `kilnjs-${version}.tgz`)
  expect(existsSync(tarball)).toBe(true)
}, 600_000)

afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

type Json = Record<string, unknown>

/** One resource's journey: what to create, change and refuse. */
interface ResourceCase {
  path: string
  create: (ids: Record<string, string>) => Record<string, unknown>
  update: Record<string, unknown>
  /** A body that must be refused with 422, and the field the error names. */
  invalid: (ids: Record<string, string>) => Record<string, unknown>
  invalidField: string
  /** An id no record has. */
  missingId: string
}

/** A model the app adds once its API is generated, that an existing resource then includes. */
interface LaterModel {
  /** Its table, as appended to the schema. */
  code: string
  /** Its path, and the existing resource (first in `resources`) it belongs to. */
  path: string
  parent: string
  create: (parentId: string) => Record<string, unknown>
}

interface AppCase extends AppSpec {
  /** Where the app's tsconfig resolves modules: both styles must type-check. */
  moduleResolution: 'nodenext' | 'bundler'
  later: LaterModel
  database?: () => Promise<{ url: string; drop(): Promise<void> }>
  resources: ResourceCase[]
}

const bookshop: AppCase = {
  name: 'bookshop',
  fixture: 'bookshop',
  runtime: ['pg'],
  moduleResolution: 'nodenext',
  database: createPostgresTestDatabase,
  later: {
    code: `
export const reviews = pgTable('reviews', {
  id: uuid('id').primaryKey().defaultRandom(),
  authorId: uuid('author_id')
    .notNull()
    .references(() => authors.id, { onDelete: 'cascade' }),
  stars: integer('stars').notNull(),
})
`,
    path: 'reviews',
    parent: 'authors',
    create: (authorId) => ({ author_id: authorId, stars: 5 }),
  },
  resources: [
    {
      path: 'authors',
      create: () => ({ name: 'Ursula K. Le Guin', bio: 'Earthsea' }),
      update: { name: 'Ursula Le Guin' },
      invalid: () => ({ bio: 'no name' }),
      invalidField: 'name',
      missingId: randomUUID(),
    },
    {
      path: 'books',
      create: (ids) => ({
        author_id: ids.authors,
        title: 'A Wizard of Earthsea',
        price: '12.50',
        tags: ['fantasy', 'classic'],
      }),
      update: { price: '9.99', in_print: false },
      invalid: (ids) => ({ author_id: ids.authors, title: 'Priceless' }),
      invalidField: 'price',
      missingId: randomUUID(),
    },
    {
      path: 'orders',
      create: (ids) => ({ book_id: ids.books, quantity: 2, details: { gift: true } }),
      update: { status: 'paid' },
      invalid: (ids) => ({ book_id: ids.books, quantity: 1, status: 'lost' }),
      invalidField: 'status',
      missingId: randomUUID(),
    },
  ],
}

/**
 * The lowest version of each required peer that kiln's range allows, installed by the repository
 * under an npm alias so that it is in the npm cache (package.json devDependencies).
 */
const PEER_FLOORS: Record<string, string> = {
  hono: 'peer-floor-hono',
  '@hono/node-server': 'peer-floor-hono-node-server',
  'drizzle-orm': 'peer-floor-drizzle-orm',
  zod: 'peer-floor-zod',
  '@modelcontextprotocol/server': 'peer-floor-mcp-server',
}

const kilnManifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>
}

/** The version a range starts at: `^4.2.0` and `>=4.2.0 <5` both start at 4.2.0. */
function lowerBound(range: string): string | undefined {
  return /^(?:\^|>=)\s*(\d+\.\d+\.\d+)/.exec(range)?.[1]
}

function installedVersion(dir: string, name: string): string {
  return JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version
}

const notes: AppCase = {
  name: 'notes',
  fixture: 'notes',
  runtime: ['better-sqlite3'],
  substitutes: PEER_FLOORS,
  moduleResolution: 'bundler',
  later: {
    code: `
export const labels = sqliteTable('labels', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  notebookId: integer('notebook_id')
    .notNull()
    .references(() => notebooks.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
})
`,
    path: 'labels',
    parent: 'notebooks',
    create: (notebookId) => ({ notebook_id: Number(notebookId), name: 'urgent' }),
  },
  resources: [
    {
      path: 'notebooks',
      create: () => ({ title: 'Ideas' }),
      update: { title: 'Better ideas' },
      invalid: () => ({}),
      invalidField: 'title',
      missingId: '987654',
    },
    {
      path: 'notes',
      create: (ids) => ({ notebook_id: Number(ids.notebooks), body: 'Ship it', pinned: true }),
      update: { pinned: false },
      invalid: (ids) => ({ notebook_id: Number(ids.notebooks), pinned: 'yes', body: 'x' }),
      invalidField: 'pinned',
      missingId: '987654',
    },
  ],
}

describe.each([bookshop, notes])('kiln installed in the $name app', (spec) => {
  const dir = join(work, spec.name)
  let env: Record<string, string> = appEnv(SECRET)
  let dropDatabase: (() => Promise<void>) | undefined
  let server: RunningProcess | undefined
  let base = ''
  let key = ''
  const kiln = (...args: string[]) => run(dir, join(dir, 'node_modules/.bin/kilnjs'), args, env)

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true })
    if (spec.database) {
      if (!postgresUrl) throw new Error('KILN_TEST_DATABASE_URL is not set')
      const database = await spec.database()
      dropDatabase = database.drop
      env = appEnv({ DATABASE_URL: database.url, ...SECRET })
    }
  })

  afterAll(async () => {
    await server?.stop()
    await dropDatabase?.()
  })

  it('installs from the tarball with only its own driver, compiling no native module', async () => {
    await createApp(dir, spec, tarball)
    const installed = (name: string) => existsSync(join(dir, 'node_modules', name))
    expect(installed('kilnjs/dist/index.js')).toBe(true)
    expect(installed('kilnjs/migrations')).toBe(true)
    expect(installed('kilnjs/docs/getting-started.md')).toBe(true)
    // package.json says MIT: the licence text travels with the package.
    expect(readFileSync(join(dir, 'node_modules/kilnjs/LICENSE'), 'utf8')).toBe(
      readFileSync(join(repoRoot, 'LICENSE'), 'utf8'),
    )
    for (const absent of [
      'redoc',
      'ioredis',
      'bullmq',
      '@electric-sql/pglite',
      '@aws-sdk/client-s3',
    ]) {
      expect(installed(absent), absent).toBe(false)
    }
    expect(installed('better-sqlite3')).toBe(spec.runtime.includes('better-sqlite3'))
    for (const peer of PEERS) {
      // The notes app is on each peer's floor: the lowest version kiln's range allows.
      const range = kilnManifest.peerDependencies[peer] as string
      const expected = spec.substitutes?.[peer] ? lowerBound(range) : pinnedVersion(repoRoot, peer)
      expect(installedVersion(dir, peer), `${peer} (${range})`).toBe(expected)
    }
    // A Postgres app builds nothing at install time: no package with a native addon is there.
    expect(nativeAddons(dir)).toEqual(
      spec.runtime.includes('better-sqlite3') ? ['better-sqlite3'] : [],
    )
  }, 300_000)

  it('goes through init, make:api, migrations and a key as the printed steps say', async () => {
    // The getting-started commands as written, from a script: no terminal, no --yes.
    const init = await kiln('init', '--main', 'src/main.ts')
    for (const step of [
      'npx kilnjs make:api --all',
      'npx drizzle-kit generate',
      'npx kilnjs migrate',
      'npx kilnjs make:api-key first-key --save',
      'npx tsx src/main.ts',
    ]) {
      expect(init).toContain(step)
    }
    expect(readFileSync(join(dir, 'drizzle.config.ts'), 'utf8')).toContain(
      "tablesFilter: ['!api_keys', '!oauth_*', '!kiln_*']",
    )
    await kiln('make:api', '--all')
    await run(dir, join(dir, 'node_modules/.bin/drizzle-kit'), ['generate'], env)
    const migrated = await kiln('migrate')
    expect(migrated).toContain('kiln/0001_api_keys.sql')
    // make:api recorded its api_keys migration in drizzle-kit's journal: drizzle-kit's own follows it.
    expect(migrated).toContain('app/0000_api_keys.sql')
    expect(migrated).toMatch(/app\/0001_\w+\.sql/)
    key = keyFrom(await kiln('make:api-key', 'first-key', '--save'))

    // OAuth and MCP: the module, then each step init:mcp prints, until none is left.
    const mcp = await kiln('init:mcp')
    expect(mcp).toContain('create src/mcp.ts')
    expect(mcp).not.toContain('npx kilnjs migrate')
    mountAsPrinted(dir, mcp)
    allowModel(dir, spec.resources[0]?.path ?? '')
    writeSignIn(dir)
    const again = await kiln('init:mcp')
    expect(again).toContain('skip   src/mcp.ts (exists)')
    expect(again).toContain('OAuth and MCP are set up: nothing left to do.')
  }, 300_000)

  it('type-checks in a default strict tsconfig', async () => {
    await run(dir, join(dir, 'node_modules/.bin/tsc'), ['--init'], env)
    if (spec.moduleResolution === 'bundler') {
      const tsconfig = readFileSync(join(dir, 'tsconfig.json'), 'utf8').replace(
        '"module": "nodenext"',
        '"module": "preserve", "moduleResolution": "bundler"',
      )
      writeFileSync(join(dir, 'tsconfig.json'), tsconfig)
    }
    await run(dir, join(dir, 'node_modules/.bin/tsc'), ['--noEmit'], env)
  }, 300_000)

  it('serves every generated endpoint', async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    server = startApp(dir, { ...env, PORT: String(port), APP_URL: base })
    await waitFor(
      async () => {
        if (server?.child.exitCode !== null) throw new Error(`the app exited:\n${server?.output()}`)
        return (await fetch(`${base}/api/openapi.json`).catch(() => undefined))?.ok === true
      },
      `the ${spec.name} app on ${base}`,
      120_000,
    )
    const call = async (method: string, path: string, body?: unknown, auth = true) => {
      const response = await fetch(`${base}/api/v1/${path}`, {
        method,
        headers: {
          ...(auth ? { Authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      return { status: response.status, json: text ? JSON.parse(text) : undefined }
    }
    const ids: Record<string, string> = {}
    for (const resource of spec.resources) {
      const created = await call('POST', resource.path, resource.create(ids))
      expect(created.status, `POST /${resource.path}: ${JSON.stringify(created.json)}`).toBe(201)
      const id = String(created.json.data.id)
      ids[resource.path] = id
      const listed = await call('GET', resource.path)
      expect(listed.status).toBe(200)
      expect(listed.json.data.map((row: { id: unknown }) => String(row.id))).toContain(id)
      const shown = await call('GET', `${resource.path}/${id}`)
      expect(shown.status).toBe(200)
      expect(shown.json.data).toEqual(created.json.data)
      const updated = await call('PUT', `${resource.path}/${id}`, resource.update)
      expect(updated.status, `PUT /${resource.path}: ${JSON.stringify(updated.json)}`).toBe(200)
      expect(updated.json.data).toMatchObject(resource.update)
      const refused = await call('POST', resource.path, resource.invalid(ids))
      expect(refused.status, JSON.stringify(refused.json)).toBe(422)
      expect(Object.keys(refused.json.errors)).toContain(resource.invalidField)
      expect((await call('GET', resource.path, undefined, false)).status).toBe(401)
      expect((await call('GET', `${resource.path}/${resource.missingId}`)).status).toBe(404)
    }
    // Delete in reverse, children first, then check each is gone.
    for (const resource of [...spec.resources].reverse()) {
      const id = ids[resource.path]
      expect((await call('DELETE', `${resource.path}/${id}`)).status).toBe(200)
      expect((await call('GET', `${resource.path}/${id}`)).status).toBe(404)
    }
  }, 300_000)

  it('lets an assistant that was approved on the consent page list the allowed model', async () => {
    const [allowed] = spec.resources
    if (!allowed) throw new Error('the app has no resource')
    const created = await fetch(`${base}/api/v1/${allowed.path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(allowed.create({})),
    })
    expect(created.status).toBe(201)
    const id = String(((await created.json()) as { data: { id: unknown } }).data.id)
    const browser = await launchChromium()
    try {
      const client = await connectThroughConsent(browser, base, PERSON)
      try {
        const listed = await ok<{ records: { id: unknown }[] }>(client, 'crud_list', {
          model: allowed.path,
        })
        expect(listed.records.map((record) => String(record.id))).toEqual([id])
        // Every other model stays commented out in the policy.
        const other = spec.resources[1]?.path ?? ''
        const refused = await client.callTool({ name: 'crud_list', arguments: { model: other } })
        expect(refused.isError).toBe(true)
      } finally {
        await client.close()
      }
    } finally {
      await browser.close()
    }
  }, 300_000)

  it('documents itself: a valid OpenAPI document, and api:check passes', async () => {
    const document = await (await fetch(`${base}/api/openapi.json`)).json()
    await SwaggerParser.validate(structuredClone(document))
    for (const resource of spec.resources) {
      expect(Object.keys(document.paths)).toContain(`/api/v1/${resource.path}`)
    }
    const checked = await kiln('api:check', '--api-key', key, '--url', base)
    expect(checked).not.toMatch(/✗/)
  })

  it('a model added later: make:api again, and an existing resource includes it unedited', async () => {
    const { later } = spec
    await server?.stop()
    server = undefined
    const controller = join(dir, 'src/api/controllers', `${later.parent}.ts`)
    const before = readFileSync(controller, 'utf8')
    appendFileSync(join(dir, 'src/db/schema.ts'), later.code)
    const made = await kiln('make:api', '--all')
    expect(made).toMatch(new RegExp(`new +src/api/controllers/${later.path}\\.ts`))
    expect(made).toContain(`includes ${later.path} now`)
    await run(dir, join(dir, 'node_modules/.bin/drizzle-kit'), ['generate'], env)
    await kiln('migrate')
    // The parent's controller is as it was, and the app still compiles under --strict.
    expect(readFileSync(controller, 'utf8')).toBe(before)
    await run(dir, join(dir, 'node_modules/.bin/tsc'), ['--noEmit'], env)
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    server = startApp(dir, { ...env, PORT: String(port), APP_URL: base })
    await waitFor(
      async () => (await fetch(`${base}/api/openapi.json`).catch(() => undefined))?.ok === true,
      `the ${spec.name} app again on ${base}`,
      120_000,
    )
    const request = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}/api/v1/${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: response.status, json: (await response.json()) as { data: Json } }
    }
    const parent = spec.resources.find((resource) => resource.path === later.parent)!
    const made1 = await request('POST', parent.path, parent.create({}))
    expect(made1.status).toBe(201)
    const parentId = String(made1.json.data.id)
    const child = await request('POST', later.path, later.create(parentId))
    expect(child.status, JSON.stringify(child.json)).toBe(201)
    const listed = await request('GET', `${parent.path}?include=${later.path}&per_page=100`)
    expect(listed.status, JSON.stringify(listed.json)).toBe(200)
    const rows = listed.json.data as unknown as Json[]
    const row = rows.find((candidate) => String(candidate.id) === parentId)!
    const included = row[later.path] as Json[]
    expect(included.map((record) => String(record.id))).toEqual([String(child.json.data.id)])
  }, 300_000)
})

describe('kiln installed beside zod 3, outside its zod range', () => {
  const dir = join(work, 'zod3')
  const spec: AppSpec = {
    name: 'zod3',
    fixture: 'notes',
    runtime: [],
    substitutes: { zod: 'peer-outside-zod' },
    // npm itself refuses this install (ERESOLVE, docs/getting-started.md); the app gets here
    // with --legacy-peer-deps, --force, pnpm or Yarn, which only warn.
    npmFlags: ['--legacy-peer-deps'],
  }

  beforeAll(async () => {
    await createApp(dir, spec, tarball)
    expect(installedVersion(dir, 'zod')).toBe('3.25.76')
  }, 300_000)

  const expected =
    /kiln needs zod \^4\.2\.0; this app has zod 3\.25\.76 \(\S*node_modules\/zod\/package\.json\): npm install 'zod@\^4\.2\.0'/
      .source

  it('importing kiln fails at once with one message naming zod, the version and the fix', async () => {
    for (const entry of [
      'kilnjs',
      'kilnjs/core',
      'kilnjs/api',
      'kilnjs/db',
      'kilnjs/mcp',
      'kilnjs/session',
    ]) {
      const failure = await run(dir, 'node', [
        '--input-type=module',
        '-e',
        `await import('${entry}')`,
      ]).then(
        () => '',
        (error: Error) => error.message,
      )
      expect(failure, entry).toMatch(new RegExp(`PeerVersionError: ${expected}`))
      // Not the crash inside kiln it replaces.
      expect(failure).not.toMatch(/is not a function/)
    }
  })

  it('the kiln command prints the message alone and exits 1', async () => {
    const error = await run(dir, join(dir, 'node_modules/.bin/kilnjs'), ['--help']).then(
      () => undefined,
      (caught: Error) => caught,
    )
    expect((error?.cause as { code?: number } | undefined)?.code).toBe(1)
    const failure = error?.message ?? ''
    expect(failure).toMatch(new RegExp(`\\n${expected}\\n`))
    expect(failure).not.toMatch(/ at |PeerVersionError/)
  })
})

function startApp(dir: string, env: Record<string, string>): RunningProcess {
  const child = spawn(join(dir, 'node_modules/.bin/tsx'), ['src/main.ts'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  return {
    child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
  }
}
