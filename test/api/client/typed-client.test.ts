import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { serve } from '@hono/node-server'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../../examples/demo/src/app.ts'
import { createDemoContext, type DemoContext } from '../../../examples/demo/src/context.ts'
import { createApiKey, generateApiClient } from '../../../src/api/index.ts'
import { runMakeClient } from '../../../src/cli/commands/make-client.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { redoclyLint } from '../openapi/lint.ts'

const repo = resolve(import.meta.dirname, '../../..')

/** A front end's code: every operation of a resource, through the generated client. */
const FRONT_END = `import { createClient, type PostsListQuery } from './api-client'

export async function run(baseUrl: string, apiKey: string) {
  const api = createClient({ baseUrl, apiKey })
  const user = await api.users.create({
    email: 'front-end@example.com',
    name: 'Front End',
    password: 'correct horse battery staple',
  })
  if (!user.ok) throw new Error(\`user: \${user.status} \${user.body.error}\`)
  const authorId: number = user.body.data.id
  const created = await api.posts.create({ title: 'Typed lists', body: 'Hello', author_id: authorId })
  if (!created.ok) throw new Error(\`create: \${created.status} \${created.body.error}\`)
  await api.posts.create({ title: 'Another post', body: 'Hi', author_id: authorId, published: true })
  await api.posts.create({ title: 'Commas, here', body: 'Hi', author_id: authorId })
  const listed = await api.posts.list({
    filter: { title: { in: ['Commas, here', 'Another post'] }, id: { not_in: [0, -1] } },
    sort: 'title',
  })
  const inList = listed.ok ? listed.body.data.map((post) => post.title) : []
  const either = await api.posts.list({
    filter: {
      author_id: authorId,
      or: [{ title: 'Another post' }, { title: { starts_with: 'Commas' }, published: false }],
    },
    sort: 'title',
  })
  if (!either.ok) throw new Error(\`or: \${either.status} \${JSON.stringify(either.body)}\`)
  const inOr = either.body.data.map((post) => post.title)

  const query: PostsListQuery = {
    filter: { title: { starts_with: 'Typed' }, author_id: authorId, published: false },
    sort: ['-created_at', 'title'],
    fields: ['id', 'title'],
    include: 'author',
    per_page: 10,
  }
  const page = await api.posts.list(query)
  if (!page.ok) throw new Error(\`list: \${page.status} \${page.body.error}\`)
  const titles: string[] = page.body.data.map((post) => post.title)
  const authors = page.body.data.map((post) => post.author?.name ?? null)
  const meta = page.body.meta
  const total: number | null = 'current_page' in meta ? meta.total : null

  const cursor = await api.posts.list({ cursor: '', per_page: 1, filter: { author_id: authorId } })
  const next = cursor.ok && 'next_cursor' in cursor.body.meta ? cursor.body.meta.next_cursor : null

  const invalid = await api.posts.create({ title: '', body: 'x', author_id: authorId })
  const problems = !invalid.ok && invalid.status === 422 ? invalid.body.errors : undefined

  const missing = await api.posts.show(987654)
  const notFound = !missing.ok && missing.status === 404 ? missing.body.error : undefined

  const counted = await api.posts.aggregate({ count: '*', group_by: 'published', filter: { author_id: authorId } })
  const groups = counted.ok ? counted.body.data.map((group) => [group.group.published, group.count]) : null
  const [first, second] = listed.ok ? listed.body.data : []
  const changed = await api.posts.updateMany([
    { id: first?.id ?? 0, title: 'Bulk one' },
    { id: second?.id ?? 0, title: 'Bulk two' },
  ])
  const bulkTitles = changed.ok ? changed.body.data.map((post) => post.title).sort() : null
  const removed = await api.posts.deleteMany([first?.id ?? 0, second?.id ?? 0])
  const removedCount: number | null = removed.ok ? removed.body.count : null

  const shown = await api.posts.show(created.body.data.id)
  const updated = await api.posts.update(created.body.data.id, { title: 'Typed again' })
  const deleted = await api.posts.delete(created.body.data.id)
  const gone = await api.posts.show(created.body.data.id)
  return {
    inList,
    inOr,
    titles,
    authors,
    total,
    next,
    problems,
    notFound,
    shown: shown.ok ? shown.body.data.title : null,
    updated: updated.ok ? updated.body.data.title : null,
    deleted: deleted.ok ? deleted.body.message : null,
    gone: gone.status,
    groups,
    bulkTitles,
    removedCount,
  }
}
`

/**
 * A front end watching posts: it creates one, then subscribes from the feed's start (`0`), so
 * the retained window replays the creation whether it came before the stream opened or not; the
 * filter narrows the stream to that post.
 */
const SUBSCRIBER = `import { createClient, type PostsEvent } from './api-client'

export async function run(baseUrl: string, apiKey: string) {
  const api = createClient({ baseUrl, apiKey })
  const users = await api.users.list({ per_page: 1 })
  const authorId = users.ok ? (users.body.data[0]?.id ?? 0) : 0
  const made = await api.posts.create({ title: 'Streamed post', body: 'Hi', author_id: authorId })
  if (!made.ok) throw new Error(\`create: \${made.status}\`)
  const controller = new AbortController()
  const events = api.subscribe('posts', {
    filter: { title: { starts_with: 'Streamed' } },
    lastEventId: '0',
    signal: controller.signal,
  })
  for await (const event of events) {
    const seen: PostsEvent = event
    if (seen.event === 'created') {
      const title: string = seen.data.data.title
      controller.abort()
      return { event: seen.event, id: seen.data.id === made.body.data.id, title, eventId: typeof seen.id }
    }
  }
  return null
}
`

/** Mistakes the client's types must refuse, one per file: [file, code, what the message names]. */
const MISTAKES: Array<[string, string, RegExp]> = [
  [
    'misspelled-filter.ts',
    `export const page = api.posts.list({ filter: { titel: 'Typed' } })`,
    /'titel' does not exist/,
  ],
  [
    'unsortable-field.ts',
    `export const page = api.users.list({ sort: ['password_hash'] })`,
    /"password_hash"/,
  ],
  [
    'wrong-value-type.ts',
    `export const page = api.posts.list({ filter: { published: 'yes' } })`,
    /'string' is not assignable to type 'boolean/,
  ],
  [
    'misspelled-or-field.ts',
    `export const page = api.posts.list({ filter: { or: [{ title: 'a' }, { titel: 'b' }] } })`,
    /'titel' does not exist/,
  ],
  [
    'unknown-operator.ts',
    `export const page = api.posts.list({ filter: { published: { contains: 'y' } } })`,
    /'contains' does not exist/,
  ],
  [
    'wrong-list-value.ts',
    `export const page = api.posts.list({ filter: { id: { in: ['1', '2'] } } })`,
    /'string' is not assignable to type 'number'/,
  ],
  [
    'wrong-bulk-ids.ts',
    `export const gone = api.posts.deleteMany(['1'])`,
    /'string' is not assignable to type 'number'/,
  ],
  [
    'unknown-aggregate-filter.ts',
    `export const groups = api.posts.aggregate({ filter: { titel: 'x' } })`,
    /'titel' does not exist/,
  ],
  [
    'misspelled-stream-filter.ts',
    `export const events = api.subscribe('posts', { filter: { titel: 'x' } })`,
    /'titel' does not exist/,
  ],
  [
    'wrong-body.ts',
    `export const post = api.posts.create({ title: 'x', body: 'y', author_id: '1' })`,
    /'string' is not assignable to type 'number'/,
  ],
]

/** A front end's strict tsconfig (what `tsc --init` writes, and a bundler's resolution). */
const FRONT_END_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.Preserve,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noPropertyAccessFromIndexSignature: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  types: [],
  noEmit: true,
  skipLibCheck: true,
}

function diagnosticsByFile(files: string[]): Map<string, string[]> {
  const program = ts.createProgram(files, FRONT_END_OPTIONS)
  const found = new Map<string, string[]>(files.map((file) => [file, []]))
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '(global)'
    const list = found.get(file) ?? []
    list.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    found.set(file, list)
  }
  return found
}

describe('the generated client, against the demo on 127.0.0.1', () => {
  const dir = join(repo, 'tmp', `client-${randomBytes(4).toString('hex')}`)
  let ctx: DemoContext
  let server: ReturnType<typeof serve>
  let origin: string
  let rawKey: string

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true })
    let handler: ((request: Request) => Response | Promise<Response>) | undefined
    server = serve({
      fetch: (request) => (handler ? handler(request) : new Response(null, { status: 503 })),
      port: 0,
      hostname: '127.0.0.1',
    })
    await new Promise<void>((done) => server.once('listening', () => done()))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    ctx = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: { APP_URL: origin, DEMO_EMAIL: 'demo@example.com', DEMO_PASSWORD: 'correct horse' },
    })
    const app = await createDemoApp(ctx)
    handler = (request) => app.fetch(request)
    rawKey = (await createApiKey(ctx.database, { name: 'front end', scopes: ['*'] })).rawKey
    await runMakeClient({ url: origin, out: join(dir, 'api-client.ts'), print: () => {} })
    writeFileSync(join(dir, 'front-end.ts'), FRONT_END)
    writeFileSync(join(dir, 'subscriber.ts'), SUBSCRIBER)
    for (const [file, code] of MISTAKES) {
      writeFileSync(
        join(dir, file),
        `import { createClient } from './api-client'\n\nconst api = createClient({ baseUrl: '' })\n${code}\n`,
      )
    }
  }, 120_000)

  afterAll(async () => {
    await new Promise<void>((done) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => done())
    })
    await ctx?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('make:client writes one file with no import, typed from the demo document', () => {
    const source = readFileSync(join(dir, 'api-client.ts'), 'utf8')
    expect(source).not.toMatch(/^import /m)
    for (const resource of ['posts', 'users', 'comments', 'messages']) {
      expect(source).toContain(`  ${resource}: {`)
    }
    expect(source).toContain('export interface PostsListQuery')
    expect(source).toContain('export type PostsListResult = ApiResult<')
  })

  it('the front end type-checks under a strict tsconfig; each mistake is a compile error', () => {
    const files = [
      join(dir, 'front-end.ts'),
      join(dir, 'subscriber.ts'),
      ...MISTAKES.map(([file]) => join(dir, file)),
    ]
    const diagnostics = diagnosticsByFile(files)
    expect(diagnostics.get(join(dir, 'front-end.ts'))).toEqual([])
    expect(diagnostics.get(join(dir, 'subscriber.ts'))).toEqual([])
    expect(diagnostics.get(join(dir, 'api-client.ts')) ?? []).toEqual([])
    for (const [file, , message] of MISTAKES) {
      const found = diagnostics.get(join(dir, file)) ?? []
      expect(found.length, file).toBeGreaterThan(0)
      for (const problem of found) expect(problem, file).toMatch(message)
    }
  }, 120_000)

  it('runs against the demo: list grammar, envelope and typed errors as the API answers', async () => {
    const front = (await import(join(dir, 'front-end.ts'))) as {
      run(baseUrl: string, apiKey: string): Promise<Record<string, unknown>>
    }
    const result = await front.run(origin, rawKey)
    expect(result).toEqual({
      inList: ['Another post', 'Commas, here'],
      inOr: ['Another post', 'Commas, here'],
      titles: ['Typed lists'],
      authors: ['Front End'],
      total: 1,
      next: expect.any(String),
      problems: { title: [expect.any(String)] },
      notFound: expect.any(String),
      shown: 'Typed lists',
      updated: 'Typed again',
      deleted: 'Deleted',
      gone: 404,
      groups: [
        [false, 2],
        [true, 1],
      ],
      bulkTitles: ['Bulk one', 'Bulk two'],
      removedCount: 2,
    })
  })

  it('subscribe yields a typed created event after a POST, narrowed by the filter', async () => {
    const front = (await import(join(dir, 'subscriber.ts'))) as {
      run(baseUrl: string, apiKey: string): Promise<unknown>
    }
    expect(await front.run(origin, rawKey)).toEqual({
      event: 'created',
      id: true,
      title: 'Streamed post',
      eventId: 'string',
    })
  })

  it('a status the operation does not document throws ApiClientError; the API key is sent as a Bearer', async () => {
    const source = generateApiClient(
      (await (await fetch(`${origin}/api/openapi.json`)).json()) as unknown,
    )
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated code's template literal
    expect(source).toContain("headers['authorization'] = `Bearer ${key}`")
    const file = join(dir, 'refused.ts')
    writeFileSync(
      file,
      `import { createClient, ApiClientError } from './api-client'
export async function run(baseUrl: string) {
  const answer = await createClient({ baseUrl, apiKey: 'not-a-key' }).posts.list()
  const failing = createClient({ baseUrl, fetch: async () => new Response('oops', { status: 502 }) })
  const thrown = await failing.posts.list().catch((error: unknown) => error)
  return {
    status: answer.status,
    error: answer.ok ? null : answer.body.error,
    thrown: thrown instanceof ApiClientError ? thrown.status : null,
  }
}
`,
    )
    const front = (await import(file)) as {
      run(baseUrl: string): Promise<Record<string, unknown>>
    }
    expect(await front.run(origin)).toEqual({ status: 401, error: expect.any(String), thrown: 502 })
  })

  it('the kilnjs command writes the same file from a saved document, and names a bad one', async () => {
    const document = await (await fetch(`${origin}/api/openapi.json`)).json()
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document))
    const run = promisify(execFile)
    const bin = join(repo, 'bin/kiln.js')
    const { stdout } = await run(
      process.execPath,
      [bin, 'make:client', '--file', 'openapi.json', '--out', 'cli/api-client.ts'],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' } },
    )
    expect(stdout.trim()).toBe('Wrote the typed client to cli/api-client.ts')
    expect(readFileSync(join(dir, 'cli/api-client.ts'), 'utf8')).toBe(
      readFileSync(join(dir, 'api-client.ts'), 'utf8'),
    )
    writeFileSync(join(dir, 'v31.json'), JSON.stringify({ openapi: '3.1.0', paths: {} }))
    const refused = await run(process.execPath, [bin, 'make:client', '--file', 'v31.json'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
    }).catch((error: { code: number; stderr: string }) => error)
    expect('code' in refused ? refused.code : 0).toBe(1)
    expect(refused.stderr).toMatch(/expected the OpenAPI 3\.0 document/)
  }, 60_000)

  it("the demo's OpenAPI 3.0 and 3.1 documents validate and lint (the license is the app's to give)", async () => {
    const doc30 = await (await fetch(`${origin}/api/openapi.json`)).json()
    const doc31 = (await (await fetch(`${origin}/api/openapi-3.1.json`)).json()) as {
      openapi: string
    }
    expect(doc31.openapi).toBe('3.1.0')
    for (const doc of [doc30, doc31]) {
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
      const report = await redoclyLint(doc)
      expect(report.problems.map((p) => p.ruleId)).toEqual(['info-license'])
    }
  }, 60_000)

  it('refuses a document that is not OpenAPI 3.0', () => {
    expect(() => generateApiClient({ openapi: '3.1.0', paths: {} })).toThrow(/OpenAPI 3\.0/)
    expect(() => generateApiClient({})).toThrow(/not an OpenAPI document/)
  })
})
