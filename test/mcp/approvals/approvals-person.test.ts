import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { sql } from 'drizzle-orm'
import { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { MemoryKeyValueStore, silentLogger } from '../../../src/core/index.ts'
import {
  type AuditLog,
  createAuditLog,
  createModelRegistry,
  type Database,
  migrate,
} from '../../../src/db/index.ts'
import {
  type ApprovalOptions,
  createAuditTrail,
  createDataTools,
  createMcpServer,
  type DataTools,
  type McpCaller,
  mcpHttpHandler,
} from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call } from '../support/client.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

type Era = { pin: '2026-07-28' } | 'legacy'
const ERAS: ReadonlyArray<[string, Era]> = [
  ['2026-07-28', { pin: '2026-07-28' }],
  ['2025-11-25', 'legacy'],
]
const caller: McpCaller = {
  userId: '7',
  tenantId: 't-1',
  clientId: 'client-1',
  scopes: ['mcp:read', 'mcp:write'],
}
/** What an assistant that answers its own question says. */
const SELF_APPROVAL = { action: 'accept', content: { approve: true } } as const

/**
 * Who approves a deletion over HTTP, in both eras, with real SDK clients: by default only the
 * signed-in person on the approval page (a URL-mode request, or the link); a client that
 * answers its own question deletes nothing, whatever it declared. Where the app lets the
 * client confirm (`clientConfirmation`), its answer is enough and is audited as such.
 */
describeEachDatabase('approval by the person, not the client', (backend) => {
  let test: TestDatabase
  let database: Database
  let log: AuditLog
  let server: ReturnType<typeof serve>
  let origin: string
  const tools: Record<'default' | 'confirming', DataTools> = {} as never
  let flush: () => Promise<void>

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    await createTestTables(database)
    log = createAuditLog(database)
    const models = createModelRegistry(schemaFor(database), database.dialect)
    const audit = createAuditTrail({ database, flushIntervalMs: 3_600_000 })
    flush = () => audit.flush()
    const app = new Hono()
    const approvals = (extra: Partial<ApprovalOptions>): ApprovalOptions => ({
      store: new MemoryKeyValueStore(),
      pageUrl: (id) => `${origin}/approvals/${id}`,
      pollMs: 20,
      ...extra,
    })
    for (const [name, options] of [
      ['default', approvals({})],
      ['confirming', approvals({ clientConfirmation: { models: ['notes'] } })],
    ] as const) {
      tools[name] = createDataTools({
        database,
        models,
        audit,
        access: { models: { notes: { tools: ['crud_list', 'crud_delete'] } } },
        approvals: options,
        logger: silentLogger(),
      })
      app.post(
        `/${name}/mcp`,
        mcpHttpHandler({
          caller: () => caller,
          keepAliveMs: 50,
          createServer: (who) =>
            createMcpServer({ dataTools: { tools: tools[name], caller: who } }),
        }),
      )
    }
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => resolve())
    })
    await test?.cleanup()
  })

  const asked: Array<Record<string, unknown>> = []
  beforeEach(() => {
    asked.length = 0
  })

  /** A client of `era` declaring `elicitation`, answering every question with `answer`. */
  async function connect(
    app: 'default' | 'confirming',
    era: Era,
    elicitation: { form?: Record<string, never>; url?: Record<string, never> },
    answer: (params: Record<string, unknown>) => Promise<unknown> = async () => SELF_APPROVAL,
  ): Promise<Client> {
    const client = new Client(
      { name: 'approvals-person-test', version: '1.0.0' },
      { versionNegotiation: { mode: era }, capabilities: { elicitation } },
    )
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as Record<string, unknown>
      asked.push(params)
      return (await answer(params)) as never
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/${app}/mcp`), { fetch: watching }),
    )
    return client
  }

  /** How many SSE keep-alive frames the server sent on the calls' streams. */
  let keepAlives = 0
  const watching: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    if (!response.body || !response.headers.get('content-type')?.includes('event-stream')) {
      return response
    }
    const [mine, theirs] = response.body.tee()
    void (async () => {
      const decoder = new TextDecoder()
      const reader = mine.getReader()
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        keepAlives += decoder.decode(read.value).split(': keepalive').length - 1
      }
    })().catch(() => {})
    return new Response(theirs, response)
  }

  async function newNote(title: string): Promise<number> {
    const statement = sql`INSERT INTO notes (tenant_id, title, created_at, updated_at) VALUES ('t-1', ${title}, ${now()}, ${now()}) RETURNING id`
    const rows =
      database.dialect === 'postgres'
        ? (await database.db.execute(statement)).rows
        : database.db.all(statement)
    return Number((rows[0] as { id: number }).id)
  }
  const now = () => (database.dialect === 'postgres' ? new Date().toISOString() : Date.now())
  async function exists(id: number): Promise<boolean> {
    const statement = sql`SELECT id FROM notes WHERE id = ${id}`
    const rows =
      database.dialect === 'postgres'
        ? (await database.db.execute(statement)).rows
        : database.db.all(statement)
    return rows.length === 1
  }
  /** The audit trail of the deletions of `id`, oldest first: [outcome, message]. */
  async function trailOf(id: number): Promise<Array<[string, string | null]>> {
    await flush()
    return (await log.list({ tool: 'crud_delete', limit: 1000 }))
      .filter((entry) => Number(entry.recordIds[0]) === id)
      .reverse()
      .map((entry) => [entry.outcome, entry.message])
  }

  for (const [eraName, era] of ERAS) {
    it(`${eraName}: a client declaring every mode that answers its own question deletes nothing`, async () => {
      const client = await connect('default', era, { form: {}, url: {} })
      try {
        const id = await newNote('Self-approved?')
        const outcome = await call(client, 'crud_delete', { model: 'notes', id })
        expect(outcome.isError).toBe(true)
        expect(outcome.text).toMatch(/approved by the user on the approval page, not by the client/)
        expect(await exists(id)).toBe(true)
        // It was sent to the page (URL mode), not asked a question it could answer itself.
        expect(asked).toHaveLength(1)
        expect(asked[0]).toMatchObject({ mode: 'url' })
        expect(String(asked[0]!.url)).toMatch(new RegExp(`^${origin}/approvals/[\\w-]{43}$`))
        const outcomes = (await trailOf(id)).map(([outcome]) => outcome)
        expect(outcomes).toEqual(['awaiting_approval', 'refused'])
      } finally {
        await client.close()
      }
    })

    it(`${eraName}: a client with form elicitation only gets the link, not a question`, async () => {
      const client = await connect('default', era, { form: {} })
      try {
        const id = await newNote('Linked')
        const result = await client.callTool({
          name: 'crud_delete',
          arguments: { model: 'notes', id },
        })
        expect(result.isError).not.toBe(true)
        expect(result.structuredContent).toMatchObject({ status: 'approval_required' })
        expect(asked).toEqual([])
        expect(await exists(id)).toBe(true)
      } finally {
        await client.close()
      }
    })

    for (const decision of ['approved', 'denied'] as const) {
      it(`${eraName}: URL mode waits for the person's decision on the page: ${decision}`, async () => {
        // The person decides on the page while the client's call waits.
        const client = await connect('default', era, { url: {} }, async (params) => {
          const id = String(params.url).split('/').pop()!
          setTimeout(() => void tools.default.approvals.decide(id, '7', decision), 100)
          return { action: 'accept' }
        })
        try {
          const id = await newNote(`URL mode, ${decision}`)
          const outcome = await call(client, 'crud_delete', { model: 'notes', id })
          expect(await exists(id)).toBe(decision === 'denied')
          const entries = await trailOf(id)
          if (decision === 'approved') {
            expect(outcome).toMatchObject({ isError: false, json: { message: 'Deleted', id } })
            expect(entries.map(([outcome]) => outcome)).toEqual([
              'awaiting_approval',
              'approved',
              'ok',
            ])
            expect(entries[1]![1]).toMatch(/^Approved on the approval page by user 7 at \d{4}-/)
          } else {
            expect(outcome.isError).toBe(true)
            expect(entries.map(([outcome]) => outcome)).toEqual(['awaiting_approval', 'denied'])
          }
        } finally {
          await client.close()
        }
      })
    }

    it(`${eraName}: where the app lets the client confirm, its answer deletes and is audited as the client's`, async () => {
      const client = await connect('confirming', era, { form: {} })
      try {
        const id = await newNote('Client-confirmed')
        const outcome = await call(client, 'crud_delete', { model: 'notes', id })
        expect(outcome).toMatchObject({ isError: false, json: { message: 'Deleted', id } })
        expect(asked).toHaveLength(1)
        expect(asked[0]!.mode ?? 'form').toBe('form')
        expect(await exists(id)).toBe(false)
        const entries = await trailOf(id)
        expect(entries.map(([outcome]) => outcome)).toEqual([
          'awaiting_approval',
          'client_confirmed',
          'ok',
        ])
        expect(entries[1]![1]).toMatch(/^Confirmed by the client/)
      } finally {
        await client.close()
      }
    })

    it(`${eraName}: a call waiting for the page ends when the client cancels it`, async () => {
      let opened!: () => void
      const waiting = new Promise<void>((resolve) => {
        opened = resolve
      })
      const client = await connect('default', era, { url: {} }, async () => {
        opened()
        return { action: 'accept' }
      })
      try {
        const id = await newNote('Cancelled while waiting')
        const abort = new AbortController()
        const called = client.callTool(
          { name: 'crud_delete', arguments: { model: 'notes', id } },
          { signal: abort.signal },
        )
        called.catch(() => {})
        await waiting
        const before = keepAlives
        // The person has not decided: the call waits, its 2025-era stream kept alive.
        await new Promise((resolve) => setTimeout(resolve, 300))
        if (era === 'legacy') expect(keepAlives).toBeGreaterThan(before)
        abort.abort()
        await expect(called).rejects.toThrow()
        await expect
          .poll(async () => (await trailOf(id)).map(([outcome]) => outcome), { timeout: 10_000 })
          .toEqual(['awaiting_approval', 'cancelled'])
        expect(await exists(id)).toBe(true)
      } finally {
        await client.close()
      }
    })
  }

  it('2025-11-25: two clients on one token: the one without URL mode gets the link, the other the page', async () => {
    // The one that declared URL mode initializes last: a per-token memory would lend its
    // declaration to the other.
    const plain = await connect('default', 'legacy', {})
    const asking = await connect('default', 'legacy', { url: {} }, async (params) => {
      const approval = String(params.url).split('/').pop()!
      await tools.default.approvals.decide(approval, '7', 'approved')
      return { action: 'accept' }
    })
    try {
      const kept = await newNote('Linked, shared token')
      const linked = await plain.callTool({
        name: 'crud_delete',
        arguments: { model: 'notes', id: kept },
      })
      expect(linked.isError).not.toBe(true)
      expect(linked.structuredContent).toMatchObject({ status: 'approval_required' })
      expect(asked).toEqual([])
      const gone = await newNote('Approved, shared token')
      const approved = await call(asking, 'crud_delete', { model: 'notes', id: gone })
      expect(approved).toMatchObject({ isError: false, json: { message: 'Deleted', id: gone } })
      expect(await exists(kept)).toBe(true)
      expect(await exists(gone)).toBe(false)
      expect((await trailOf(kept)).map(([outcome]) => outcome)).toEqual(['awaiting_approval'])
    } finally {
      await plain.close()
      await asking.close()
    }
  })
})
