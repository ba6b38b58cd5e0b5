import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { ManualClock, MemoryKeyValueStore, silentLogger } from '../../../src/core/index.ts'
import {
  type AuditLog,
  type AuditRecord,
  createAuditLog,
  createModelRegistry,
  type Database,
  migrate,
} from '../../../src/db/index.ts'
import {
  type AuditTrail,
  createAuditTrail,
  createDataTools,
  createMcpServer,
  type DataTools,
  type McpCaller,
} from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { connectInMemory } from '../support/client.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

const caller: McpCaller = {
  userId: '7',
  tenantId: 't-1',
  clientId: 'client-1',
  scopes: ['mcp:read', 'mcp:write'],
}
const TTL_MS = 10 * 60_000
const REF = /\(approval ([0-9a-f]{16})\)$/

/**
 * Every link-flow approval ends in the audit trail, whether or not the client comes back: the
 * person's decision is recorded when made on the page, and an approval nobody answered is
 * closed as `expired` by the data tools' sweep (at most once a minute, no timer per approval).
 */
describeEachDatabase('the audit outcome of an approval nobody retries', (backend) => {
  let test: TestDatabase
  let database: Database
  let log: AuditLog
  let trail: AuditTrail
  let tools: DataTools
  let clock: ManualClock
  const clients: Client[] = []

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    await createTestTables(database)
    log = createAuditLog(database)
    clock = new ManualClock(Date.now())
    trail = createAuditTrail({ database, flushIntervalMs: 3_600_000, clock })
    tools = createDataTools({
      database,
      models: createModelRegistry(schemaFor(database), database.dialect),
      audit: trail,
      access: { models: { notes: { tools: ['crud_list', 'crud_delete'] } } },
      approvals: {
        store: new MemoryKeyValueStore(),
        pageUrl: (id) => `http://127.0.0.1/approvals/${id}`,
        clock,
        ttlMs: TTL_MS,
      },
      logger: silentLogger(),
    })
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })
  afterAll(async () => {
    await trail.close()
    await test?.cleanup()
  })

  /** A new connection: registering the tools is what runs the sweep when one is due. */
  async function connect(): Promise<Client> {
    const client = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
    clients.push(client)
    return client
  }

  /** Asks to delete note `id`: the client is given the page's link, and never comes back. */
  async function askToDelete(id: number): Promise<{ approvalId: string; ref: string }> {
    const client = await connect()
    const answer = await client.callTool({ name: 'crud_delete', arguments: { model: 'notes', id } })
    const link = answer.structuredContent as { status: string; approval_id: string }
    expect(link.status).toBe('approval_required')
    await trail.flush()
    const waiting = (await entriesOf(id)).find((entry) => entry.outcome === 'awaiting_approval')
    expect(waiting?.message).toMatch(/^Waiting for the user's approval \(approval [0-9a-f]{16}\)$/)
    return { approvalId: link.approval_id, ref: REF.exec(waiting!.message!)![1]! }
  }

  async function entriesOf(id: number): Promise<AuditRecord[]> {
    const all = await log.list({ tool: 'crud_delete', limit: 1000 })
    return all.filter((entry) => entry.recordIds.includes(id)).reverse()
  }

  /** Lets the sweep's minute pass and the approvals expire, then opens a connection. */
  async function sweepAfterExpiry(): Promise<void> {
    clock.advance(TTL_MS + 61_000)
    await connect()
  }

  async function until(done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 5000
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the audit trail')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it('closes an approval nobody answered as expired, once', async () => {
    const { ref } = await askToDelete(101)
    await sweepAfterExpiry()
    await until(async () => (await entriesOf(101)).some((entry) => entry.outcome === 'expired'))
    const entries = await entriesOf(101)
    expect(entries.map((entry) => entry.outcome)).toEqual(['awaiting_approval', 'expired'])
    expect(entries[1]).toMatchObject({
      userId: '7',
      tenantId: 't-1',
      clientId: 'client-1',
      model: 'notes',
      message: `The approval expired before the user decided (approval ${ref})`,
    })
    // A later sweep finds it closed.
    await sweepAfterExpiry()
    await trail.flush()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await entriesOf(101)).map((entry) => entry.outcome)).toEqual([
      'awaiting_approval',
      'expired',
    ])
  })

  it('records the decision on the page when it is made, by whom and when', async () => {
    for (const [id, decision] of [
      [102, 'denied'],
      [103, 'approved'],
    ] as const) {
      const { approvalId, ref } = await askToDelete(id)
      expect(await tools.approvals.decide(approvalId, '7', decision)).toBe(true)
      await trail.flush()
      const at = new Date(clock.now()).toISOString()
      const words = decision === 'denied' ? 'Denied' : 'Approved'
      expect((await entriesOf(id)).at(-1)).toMatchObject({
        outcome: decision,
        userId: '7',
        tenantId: 't-1',
        clientId: 'client-1',
        message: `${words} on the approval page by user 7 at ${at} (approval ${ref})`,
      })
    }
    // Decided, so the sweep leaves them alone even though nobody retried.
    await sweepAfterExpiry()
    await trail.flush()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await entriesOf(102)).map((entry) => entry.outcome)).toEqual([
      'awaiting_approval',
      'denied',
    ])
    expect((await entriesOf(103)).map((entry) => entry.outcome)).toEqual([
      'awaiting_approval',
      'approved',
    ])
  })
})
