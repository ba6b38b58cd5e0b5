import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client as ClientV2 } from '@modelcontextprotocol/client'
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMakeMessaging } from '../../src/cli/commands/make-messaging.ts'
import { createAuditLog, createDatabase, type Database, migrate } from '../../src/db/index.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import { repoRoot } from '../support/processes.ts'
import { call, ok } from './support/client.ts'

const MSG_SECRET = 'stdio-app-secret-value-4242'
const quietMigrations = { logger: { info() {}, warn() {} } as never }

interface StdioApp {
  dialect: 'sqlite' | 'postgres'
  schema: string
  migrations: string
  /** The database the child process opens, set up by the test. */
  open(root: string): Promise<{
    database: Database
    env: Record<string, string>
    configUrl?: string
    cleanup(): Promise<void>
  }>
}

const apps: Record<string, StdioApp> = {
  sqlite: {
    dialect: 'sqlite',
    schema: join(repoRoot, 'test/fixtures/sqlite-app/schema.ts'),
    migrations: join(repoRoot, 'test/fixtures/sqlite-app/migrations'),
    async open(root) {
      const file = join(root, 'app.db')
      const database = await createDatabase(`sqlite:${file}`)
      return { database, env: {}, configUrl: `sqlite:./app.db`, cleanup: () => database.close() }
    },
  },
  postgres: {
    dialect: 'postgres',
    schema: join(repoRoot, 'examples/demo/src/schema.ts'),
    migrations: join(repoRoot, 'examples/demo/migrations'),
    async open() {
      const { url, drop } = await createPostgresTestDatabase()
      const database = await createDatabase(url, { poolMax: 2 })
      return {
        database,
        env: { DATABASE_URL: url },
        async cleanup() {
          await database.close()
          await drop()
        },
      }
    },
  },
}

for (const [name, app] of Object.entries(apps)) {
  describe.skipIf(name === 'postgres' && !postgresUrl)(`kilnjs mcp over stdio [${name}]`, () => {
    let root: string
    let opened: Awaited<ReturnType<StdioApp['open']>>
    let client: Client
    let transport: StdioClientTransport
    let stderr = ''

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'kiln-mcp-stdio-'))
      opened = await app.open(root)
      await migrate(opened.database, { ...quietMigrations, appMigrationsDir: app.migrations })
      writeFileSync(
        join(root, 'kiln.config.ts'),
        `export default ${JSON.stringify({
          dialect: app.dialect,
          schema: app.schema,
          out: './api',
          messaging: './src/messaging',
          ...(opened.configUrl ? { databaseUrl: opened.configUrl } : {}),
        })}\n`,
      )
      await runMakeMessaging({ cwd: root, env: {}, print: () => {} })
      transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(repoRoot, 'bin/kiln.js'), 'mcp'],
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? root,
          MSG_APP_SECRET: MSG_SECRET,
          ...opened.env,
        },
        stderr: 'pipe',
      })
      transport.stderr?.on('data', (chunk) => {
        stderr += chunk
      })
      // A client that can ask its user: deletions need approval, and it approves them.
      client = new Client(
        { name: 'kiln-stdio-test', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      )
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: 'accept',
        content: { approve: true },
      }))
      await client.connect(transport)
    }, 120_000)

    afterAll(async () => {
      await client?.close()
      await opened?.cleanup()
      rmSync(root, { recursive: true, force: true })
    })

    it('lists the data and developer tools', async () => {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([
        'crud_create',
        'crud_list',
        'crud_aggregate',
        'crud_update',
        'crud_delete',
        'messaging_config_status',
        'messaging_webhook_events',
        'code_templates',
      ])
    })

    it('creates, lists, updates and deletes through the data tools', async () => {
      // The tools never write credentials: the app creates its users itself.
      const refused = await call(client, 'crud_create', {
        model: 'users',
        data: { email: 'stdio@example.com', name: 'Stdio', password_hash: 'h4sh' },
      })
      expect(refused.text).toMatch(/Unknown field\(s\) for create on users: "password_hash"/)
      const inserted = sql`INSERT INTO users (email, name, password_hash, remember_token)
        VALUES ('stdio@example.com', 'Stdio', 'h4sh', 'tok') RETURNING id`
      const [row] =
        opened.database.dialect === 'postgres'
          ? (await opened.database.db.execute(inserted)).rows
          : opened.database.db.all(inserted)
      const [user] = (
        await ok<{ records: Array<Record<string, unknown>> }>(client, 'crud_list', {
          model: 'users',
          filters: { id: Number((row as { id: number }).id) },
        })
      ).records
      expect(user).toMatchObject({ email: 'stdio@example.com', name: 'Stdio' })
      expect(user).not.toHaveProperty('password_hash')
      expect(user).not.toHaveProperty('remember_token')
      const post = await ok(client, 'crud_create', {
        model: 'Post',
        data: { title: 'Over stdio', body: 'text', author_id: user!.id, token_count: 3 },
      })
      expect(post).toMatchObject({ title: 'Over stdio', published: false, token_count: 3 })
      const page = await ok<{ records: unknown[]; total: number; per_page: number }>(
        client,
        'crud_list',
        {
          model: 'posts',
          filters: { author_id: user!.id },
          per_page: 500,
        },
      )
      expect(page).toMatchObject({ total: 1, per_page: 100 })
      const updated = await ok(client, 'crud_update', {
        model: 'posts',
        id: post.id,
        data: { published: true },
      })
      expect(updated.published).toBe(true)
      expect(await ok(client, 'crud_delete', { model: 'posts', id: post.id })).toEqual({
        message: 'Deleted',
        id: post.id,
      })
      const dangling = await call(client, 'crud_create', {
        model: 'posts',
        data: { title: 't', body: 'b', author_id: 999_999 },
      })
      expect(dangling).toMatchObject({
        isError: true,
        text: 'Could not create posts: a referenced record does not exist, or other records still reference this one',
      })
      const unknown = await call(client, 'crud_list', { model: 'invoices' })
      expect(unknown.isError).toBe(true)
      expect(unknown.text).toMatch(/^Unknown model "invoices"\. Valid models: /)
      const huge = await call(client, 'crud_list', { model: 'posts', per_page: 1e300 })
      expect(huge.isError).toBe(false)
      expect(huge.json).toMatchObject({ per_page: 100 })
      const zero = await call(client, 'crud_list', { model: 'posts', per_page: 0 })
      expect(zero.isError).toBe(true)
    })

    it('describes the models as resources and completes model and field names', async () => {
      const { resources } = await client.listResources()
      expect(resources.map((resource) => resource.uri)).toEqual(
        expect.arrayContaining(['kiln://models/users', 'kiln://models/posts']),
      )
      const read = async (uri: string) =>
        JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text)
      const users = await read('kiln://models/users')
      expect(users.properties).toHaveProperty('email')
      expect(users.properties).not.toHaveProperty('password_hash')
      expect(users.properties).not.toHaveProperty('remember_token')
      const posts = await read('kiln://models/posts')
      expect(posts.properties.author).toMatchObject({
        anyOf: [{ $ref: 'kiln://models/users' }, { type: 'null' }],
      })
      expect(posts['x-kiln'].tools).toEqual([
        'crud_create',
        'crud_list',
        'crud_update',
        'crud_delete',
      ])
      const { completion } = await client.complete({
        ref: { type: 'ref/resource', uri: 'kiln://models/{model}/fields/{field}' },
        argument: { name: 'field', value: 'pass' },
        context: { arguments: { model: 'users' } },
      })
      expect(completion.values).toEqual([])
      const models = await client.complete({
        ref: { type: 'ref/resource', uri: 'kiln://models/{model}' },
        argument: { name: 'model', value: 'pos' },
      })
      expect(models.completion.values).toEqual(['posts'])
    })

    it('records its data-tool calls in the audit trail, with no user or client', async () => {
      const page = await ok<{ records: unknown[] }>(client, 'crud_list', { model: 'posts' })
      const refused = await call(client, 'crud_update', { model: 'posts', id: 999_999, data: {} })
      expect(refused.isError).toBe(true)
      const log = createAuditLog(opened.database)
      // Written in batches, once a second.
      await expect
        .poll(async () => (await log.list({ tool: 'crud_update' })).length, { timeout: 10_000 })
        .toBeGreaterThan(0)
      const [list] = await log.list({ tool: 'crud_list', limit: 1 })
      expect(list).toMatchObject({ userId: null, clientId: null, model: 'posts', outcome: 'ok' })
      expect(list!.recordIds).toHaveLength(page.records.length)
      expect((await log.list({ tool: 'crud_update', limit: 1 }))[0]).toMatchObject({
        outcome: 'error',
        recordIds: [999_999],
      })
    })

    it('serves a 2026-07-28 client (server/discover) and a 2025 client of the v2 SDK', async () => {
      for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
        const second = new ClientV2(
          { name: 'kiln-stdio-v2', version: '1.0.0' },
          // The probe spawns a second `kilnjs mcp`; on a busy machine it starts slowly.
          { versionNegotiation: { mode, probe: { timeoutMs: 180_000 } } },
        )
        await second.connect(
          new StdioClientTransportV2({
            command: process.execPath,
            args: [join(repoRoot, 'bin/kiln.js'), 'mcp'],
            cwd: root,
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...opened.env },
            stderr: 'ignore',
          }),
        )
        try {
          expect(second.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern')
          if (mode !== 'legacy') {
            expect(second.getNegotiatedProtocolVersion()).toBe('2026-07-28')
            expect(second.getDiscoverResult()?.capabilities.tools).toEqual({ listChanged: false })
          }
          const { tools } = await second.listTools()
          expect(tools.map((tool) => tool.name)).toContain('crud_list')
          const { resources } = await second.listResources()
          expect(resources.map((resource) => resource.uri)).toContain('kiln://models/posts')
          const fields = await second.complete({
            ref: { type: 'ref/resource', uri: 'kiln://models/{model}/fields/{field}' },
            argument: { name: 'field', value: 'titl' },
            context: { arguments: { model: 'posts' } },
          })
          expect(fields.completion.values).toEqual(['title'])
          const page = await ok<{ per_page: number }>(second, 'crud_list', {
            model: 'posts',
            per_page: 2,
          })
          expect(page.per_page).toBe(2)
        } finally {
          await second.close()
        }
      }
    }, 420_000)

    it('asks before crud_delete in both eras: approved deletes, declined does not; a client that cannot ask is refused', async () => {
      const inserted = sql`INSERT INTO users (email, name, password_hash)
        VALUES ('approver@example.com', 'Approver', 'h4sh') RETURNING id`
      const [row] =
        opened.database.dialect === 'postgres'
          ? (await opened.database.db.execute(inserted)).rows
          : opened.database.db.all(inserted)
      const authorId = Number((row as { id: number }).id)
      const spawn = () =>
        new StdioClientTransportV2({
          command: process.execPath,
          args: [join(repoRoot, 'bin/kiln.js'), 'mcp'],
          cwd: root,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...opened.env },
          stderr: 'ignore',
        })
      const exists = async (id: unknown) =>
        (
          await ok<{ total: number }>(client, 'crud_list', {
            model: 'posts',
            filters: { id: Number(id) },
          })
        ).total === 1
      for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
        let answer: 'accept' | 'decline' = 'decline'
        const asked: string[] = []
        const second = new ClientV2(
          { name: 'kiln-stdio-approver', version: '1.0.0' },
          {
            capabilities: { elicitation: { form: {} } },
            versionNegotiation: { mode, probe: { timeoutMs: 180_000 } },
          },
        )
        second.setRequestHandler('elicitation/create', async (request) => {
          asked.push(String((request.params as { message?: string }).message))
          return answer === 'accept'
            ? { action: 'accept', content: { approve: true } }
            : { action: 'decline' }
        })
        await second.connect(spawn())
        try {
          expect(second.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern')
          const post = await ok(second, 'crud_create', {
            model: 'posts',
            data: { title: 'Approve me', body: 'b', author_id: authorId },
          })
          const declined = await call(second, 'crud_delete', { model: 'posts', id: post.id })
          expect(declined).toMatchObject({
            isError: true,
            text: `The user declined: Delete posts record ${post.id}. Nothing was changed.`,
          })
          expect(await exists(post.id)).toBe(true)
          answer = 'accept'
          expect(await ok(second, 'crud_delete', { model: 'posts', id: post.id })).toEqual({
            message: 'Deleted',
            id: post.id,
          })
          expect(await exists(post.id)).toBe(false)
          expect(asked).toEqual([
            `Delete posts record ${post.id}`,
            `Delete posts record ${post.id}`,
          ])
        } finally {
          await second.close()
        }
      }
      // No signed-in user and no way to ask: refused, nothing deleted.
      const mute = new ClientV2(
        { name: 'kiln-stdio-mute', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 180_000 } } },
      )
      await mute.connect(spawn())
      try {
        const post = await ok(mute, 'crud_create', {
          model: 'posts',
          data: { title: 'Keep me', body: 'b', author_id: authorId },
        })
        const refused = await call(mute, 'crud_delete', { model: 'posts', id: post.id })
        expect(refused.isError).toBe(true)
        expect(refused.text).toMatch(
          /needs the user's approval on the approval page, and this server has none/,
        )
        expect(await exists(post.id)).toBe(true)
      } finally {
        await mute.close()
      }
    }, 420_000)

    it('reports messaging status without values and finds the scaffold listeners', async () => {
      const status = await call(client, 'messaging_config_status', {})
      expect(status.json).toMatchObject({
        configured: false,
        variables: {
          present: ['MSG_APP_SECRET'],
          missing: ['MSG_ACCESS_TOKEN', 'MSG_PHONE_NUMBER_ID', 'MSG_VERIFY_TOKEN'],
        },
        scaffold: { directory: join('src', 'messaging'), exists: true },
      })
      expect(status.text).not.toContain(MSG_SECRET)
      const events = await ok(client, 'messaging_webhook_events', {})
      expect(events.listeners).toEqual([
        { event: 'MessagingTextReceived', listener: 'TextReceivedListener' },
        { event: 'MessagingStatusUpdate', listener: 'StatusUpdateListener' },
      ])
      const templates = await ok<{ templates: Array<{ name: string }> }>(client, 'code_templates', {
        category: 'storage',
      })
      expect(templates.templates.map((t) => t.name)).toEqual([
        'single-file-upload',
        'avatar-upload',
        'temporary-url',
      ])
      expect(stderr).not.toContain(MSG_SECRET)
    })
  })
}
