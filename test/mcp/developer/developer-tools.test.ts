import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import ts from 'typescript'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runMakeMessaging } from '../../../src/cli/commands/make-messaging.ts'
import type { KilnConfig } from '../../../src/db/index.ts'
import { registerDeveloperTools } from '../../../src/mcp/developer/developer-tools.ts'
import { findListenerImplementations } from '../../../src/mcp/developer/listeners.ts'
import { CODE_TEMPLATES } from '../../../src/mcp/developer/templates.ts'
import { createMcpServer } from '../../../src/mcp/index.ts'
import { call, connectInMemory, ok } from '../support/client.ts'

const config: KilnConfig = {
  dialect: 'sqlite',
  schema: './schema.ts',
  out: './api',
  messaging: './app/messaging',
}

describe('developer tools', () => {
  let root: string
  const clients: Client[] = []

  async function connect(env: Record<string, string | undefined> = {}): Promise<Client> {
    const server = createMcpServer({
      register: [(s) => registerDeveloperTools(s, { root, kilnConfig: config, env })],
    })
    const client = await connectInMemory(server)
    clients.push(client)
    return client
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kiln-mcp-dev-'))
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('lists the three tools with their input schemas', async () => {
    const { tools } = await (await connect()).listTools()
    expect(tools.map((tool) => tool.name)).toEqual([
      'messaging_config_status',
      'messaging_webhook_events',
      'code_templates',
    ])
    const templates = tools.find((tool) => tool.name === 'code_templates')!
    expect(templates.inputSchema.properties).toMatchObject({
      category: { type: 'string', enum: ['storage', 'api', 'messaging'] },
    })
  })

  describe('messaging_config_status', () => {
    it('names present and missing variables, never their values, and the missing scaffold', async () => {
      const client = await connect({
        MSG_APP_SECRET: 'app-secret-value-123',
        MSG_ACCESS_TOKEN: 'EAAG-access-token-value',
        MSG_VERIFY_TOKEN: '',
        UNRELATED: 'x',
      })
      const outcome = await call(client, 'messaging_config_status', {})
      expect(outcome.isError).toBe(false)
      expect(outcome.json).toEqual({
        configured: false,
        variables: {
          present: ['MSG_APP_SECRET', 'MSG_ACCESS_TOKEN'],
          missing: ['MSG_PHONE_NUMBER_ID', 'MSG_VERIFY_TOKEN'],
        },
        scaffold: { directory: 'app/messaging', exists: false, listener_file_exists: false },
        next_steps: [
          'Set MSG_PHONE_NUMBER_ID, MSG_VERIFY_TOKEN in the environment',
          'Run `npx kilnjs make:messaging` to create the scaffold',
        ],
      })
      expect(outcome.text).not.toContain('app-secret-value-123')
      expect(outcome.text).not.toContain('EAAG-access-token-value')
    })

    it('reports a configured app with its scaffold', async () => {
      await runMakeMessaging({
        cwd: root,
        dir: join(root, 'app/messaging'),
        env: {},
        print: () => {},
      })
      const client = await connect({
        MSG_APP_SECRET: 'a'.repeat(16),
        MSG_ACCESS_TOKEN: 'b'.repeat(16),
        MSG_PHONE_NUMBER_ID: '1234567890',
        MSG_VERIFY_TOKEN: 'c'.repeat(16),
      })
      const status = await ok(client, 'messaging_config_status', {})
      expect(status).toMatchObject({
        configured: true,
        variables: { missing: [] },
        scaffold: { directory: 'app/messaging', exists: true, listener_file_exists: true },
        next_steps: [],
      })
    })
  })

  describe('messaging_webhook_events', () => {
    it('returns the listeners of the make:messaging scaffold', async () => {
      await mkdir(join(root, 'app/messaging'), { recursive: true })
      await runMakeMessaging({
        cwd: root,
        dir: join(root, 'app/messaging'),
        env: {},
        print: () => {},
      })
      const result = await ok(await connect(), 'messaging_webhook_events', {})
      expect(result).toEqual({
        file: join('app', 'messaging', 'listeners.ts'),
        listeners: [
          { event: 'MessagingTextReceived', listener: 'TextReceivedListener' },
          { event: 'MessagingStatusUpdate', listener: 'StatusUpdateListener' },
        ],
      })
    })

    it('reads another file inside the root, and refuses paths outside it', async () => {
      writeFileSync(
        join(root, 'custom.ts'),
        `import { Listener as Handles } from 'kilnjs/core'
export class Audit implements Handles<OrderPlaced> { async handle() {} }`,
      )
      const client = await connect()
      expect(await ok(client, 'messaging_webhook_events', { file: 'custom.ts' })).toEqual({
        file: 'custom.ts',
        listeners: [{ event: 'OrderPlaced', listener: 'Audit' }],
      })
      for (const file of ['../etc/passwd', '/etc/passwd', 'app/../../outside.ts']) {
        const outcome = await call(client, 'messaging_webhook_events', { file })
        expect(outcome).toMatchObject({
          isError: true,
          text: "file must be a path inside the app's root",
        })
      }
      const missing = await call(client, 'messaging_webhook_events', { file: 'nope.ts' })
      expect(missing).toMatchObject({ isError: true })
      expect(missing.text).toMatch(/^No listener file at nope\.ts: run `npx kilnjs make:messaging`/)
      const wrongType = await call(client, 'messaging_webhook_events', { file: 42 })
      expect(wrongType.isError).toBe(true)
    })
  })

  describe('findListenerImplementations (TypeScript parser)', () => {
    it('finds qualified, aliased, exported, expression and multi-interface implementations', () => {
      const source = `
import type { Listener, Logger } from 'kilnjs/core'
import { Listener as On } from 'kilnjs/core'
import * as core from 'kilnjs/core'
// class Fake implements Listener<NotReal> {} — a comment, not code
const text = 'class AlsoFake implements Listener<NotReal> {}'
export class A implements Listener<MessagingTextReceived> { async handle() {} }
export default class implements core.Listener<MessagingStatusUpdate> { async handle() {} }
class B implements Disposable, On<Generic<Deep>> { async handle() {} [Symbol.dispose]() {} }
const C = class implements Listener<Third> { async handle() {} }
class NotAListener implements Other<MessagingTextReceived> {}
class Base {}
class Sub extends Base implements Listener<Fourth> { async handle() {} }
`
      expect(findListenerImplementations(source)).toEqual([
        { event: 'MessagingTextReceived', listener: 'A' },
        { event: 'MessagingStatusUpdate', listener: 'default' },
        { event: 'Generic<Deep>', listener: 'B' },
        { event: 'Third', listener: 'C' },
        { event: 'Fourth', listener: 'Sub' },
      ])
    })

    it('returns nothing for a file without listeners or with syntax errors', () => {
      expect(findListenerImplementations('export const x = 1')).toEqual([])
      expect(findListenerImplementations('class {{{ implements')).toEqual([])
    })
  })

  describe('code_templates', () => {
    it('returns the three storage templates with their code', async () => {
      const result = await ok<{ templates: Array<Record<string, string>> }>(
        await connect(),
        'code_templates',
        { category: 'storage' },
      )
      expect(result.templates.map((t) => [t.name, t.title])).toEqual([
        ['single-file-upload', 'Single-file upload'],
        ['avatar-upload', 'Avatar upload with validation'],
        ['temporary-url', 'Temporary URL generation'],
      ])
      const [upload, avatar, temporary] = result.templates
      expect(upload!.code).toContain("from 'kilnjs/storage'")
      expect(upload!.code).toContain('export function uploadRoutes')
      expect(avatar!.code).toContain('MAX_AVATAR_BYTES')
      expect(temporary!.code).toContain('temporaryUrl(')
    })

    it('returns every category, one template by name, and errors for unknown ones', async () => {
      const client = await connect()
      const all = await ok<{ templates: Array<{ category: string }> }>(client, 'code_templates', {})
      expect(new Set(all.templates.map((t) => t.category))).toEqual(
        new Set(['storage', 'api', 'messaging']),
      )
      const one = await ok<{ templates: Array<{ name: string }> }>(client, 'code_templates', {
        category: 'messaging',
        name: 'auto-reply-listener',
      })
      expect(one.templates.map((t) => t.name)).toEqual(['auto-reply-listener'])
      expect(await call(client, 'code_templates', { name: 'nope' })).toMatchObject({
        isError: true,
        text: 'No template named "nope"',
      })
      const badCategory = await call(client, 'code_templates', { category: 'database' })
      expect(badCategory.isError).toBe(true)
      expect(badCategory.text).toMatch(/Input validation error/)
    })

    it('compiles every template against kiln with the project compiler settings', () => {
      const here = fileURLToPath(new URL('.', import.meta.url))
      const configPath = join(here, '../../../tsconfig.json')
      const parsed = ts.parseJsonConfigFileContent(
        ts.readConfigFile(configPath, ts.sys.readFile).config,
        ts.sys,
        join(here, '../../..'),
      )
      const files = CODE_TEMPLATES.map((t) =>
        join(here, `../../../src/mcp/developer/templates/${t.category}/${t.name}.ts`),
      )
      const program = ts.createProgram(files, { ...parsed.options, noEmit: true })
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file && files.includes(d.file.fileName))
        .map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
      expect(diagnostics).toEqual([])
      // The templates' listener is found by messaging_webhook_events too.
      const listener = ts.sys.readFile(
        files[CODE_TEMPLATES.findIndex((t) => t.name === 'auto-reply-listener')]!,
      )!
      expect(findListenerImplementations(listener)).toEqual([
        { event: 'MessagingTextReceived', listener: 'AutoReplyListener' },
      ])
    }, 120_000)
  })
})
