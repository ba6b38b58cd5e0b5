import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import {
  type AuditLog,
  createAuditLog,
  createModelRegistry,
  type Database,
  migrate,
} from '../../../src/db/index.ts'
import {
  AUDIT_OUTCOME,
  type AuditTrail,
  createAuditTrail,
  createCrud,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { execSql } from '../../api/support.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok } from '../support/client.ts'
import { createTestTables, resetTestTables, schemaFor } from '../support/schema.ts'

/** What an approval flow throws while a person has not approved the call yet. */
class PendingApproval extends Error {
  readonly [AUDIT_OUTCOME] = 'awaiting_approval' as const
}

const caller: McpCaller = {
  userId: '7',
  tenantId: 't-1',
  clientId: 'client-1',
  scopes: ['mcp:read', 'mcp:write'],
}

const access: McpAccessOptions = {
  // The calls themselves are under test here; approvals.test.ts and approvals-store.test.ts
  // record the calls the approval gate holds.
  approval: [],
  models: {
    notes: { tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'] },
    users: { tools: ['crud_list'], global: true },
  },
  authorize: ({ action, data }) => {
    if (data?.title === 'needs approval') throw new PendingApproval('Approve it first')
    return !(action === 'crud_update' && data?.title === 'forbidden')
  },
}

describeEachDatabase('the audit trail of the data tools', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  let log: AuditLog
  let trail: AuditTrail
  const clients: Client[] = []

  async function connect(options: { values?: boolean } = {}): Promise<Client> {
    trail = createAuditTrail({ database, flushIntervalMs: 3_600_000, values: options.values })
    const server = createMcpServer({
      data: { database, models, caller, access, audit: trail, logger: silentLogger() },
    })
    const client = await connectInMemory(server)
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    await createTestTables(database)
    models = createModelRegistry(schemaFor(database), database.dialect)
    log = createAuditLog(database)
  })
  afterAll(async () => {
    await test.cleanup()
  })
  beforeEach(async () => {
    await resetTestTables(database)
    await execSql(database, 'DELETE FROM kiln_mcp_audit')
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    await trail?.close()
  })

  it('records each call: who, which client, tool, model, ids, fields, outcome and duration', async () => {
    const client = await connect()
    const created = await ok<{ id: number }>(client, 'crud_create', {
      model: 'notes',
      data: { title: 'First', body: 'secret plans' },
    })
    await ok(client, 'crud_create', { model: 'notes', data: { title: 'Second' } })
    await ok(client, 'crud_list', { model: 'notes' })
    await ok(client, 'crud_update', { model: 'notes', id: created.id, data: { pinned: true } })
    await ok(client, 'crud_delete', { model: 'notes', id: created.id })
    // Written off the call's path: nothing yet, everything once the trail flushes.
    expect(await log.list()).toHaveLength(0)
    await trail.flush()
    const entries = (await log.list()).reverse()
    expect(entries.map((e) => [e.tool, e.outcome])).toEqual([
      ['crud_create', 'ok'],
      ['crud_create', 'ok'],
      ['crud_list', 'ok'],
      ['crud_update', 'ok'],
      ['crud_delete', 'ok'],
    ])
    expect(entries[0]).toMatchObject({
      userId: '7',
      tenantId: 't-1',
      clientId: 'client-1',
      model: 'notes',
      recordIds: [created.id],
      fields: ['title', 'body'],
      message: null,
      values: null,
    })
    expect(entries[0]!.durationMs).toBeGreaterThanOrEqual(0)
    expect(entries[0]!.at.getTime()).toBeLessThanOrEqual(Date.now())
    expect(entries[2]).toMatchObject({ recordIds: [created.id, created.id + 1], fields: [] })
    expect(entries[3]).toMatchObject({ recordIds: [created.id], fields: ['pinned'] })
    expect(entries[4]).toMatchObject({ recordIds: [created.id], fields: [] })
  })

  it('records the ids a list read when its fields leave the key out', async () => {
    const client = await connect()
    const first = await ok<{ id: number }>(client, 'crud_create', {
      model: 'notes',
      data: { title: 'First' },
    })
    await ok(client, 'crud_create', { model: 'notes', data: { title: 'Second' } })
    const page = await ok<{ records: Record<string, unknown>[] }>(client, 'crud_list', {
      model: 'notes',
      fields: ['title'],
      sort: 'id',
    })
    // The answer keeps to the fields asked for; the trail still knows which records were read.
    expect(page.records).toEqual([{ title: 'First' }, { title: 'Second' }])
    await trail.flush()
    const listed = (await log.list()).find((entry) => entry.tool === 'crud_list')
    expect(listed?.recordIds).toEqual([first.id, first.id + 1])
  })

  it('tells refused calls from failed ones, and records a pending approval', async () => {
    const client = await connect()
    const note = await ok<{ id: number }>(client, 'crud_create', {
      model: 'notes',
      data: { title: 'Mine' },
    })
    // Refused: a tool the policy does not allow, and the app's authorize hook saying no.
    expect(
      (await call(client, 'crud_create', { model: 'users', data: { name: 'x' } })).isError,
    ).toBe(true)
    const hook = await call(client, 'crud_update', {
      model: 'notes',
      id: note.id,
      data: { title: 'forbidden' },
    })
    expect(hook.isError).toBe(true)
    // Errors: an unknown record, invalid data.
    expect((await call(client, 'crud_delete', { model: 'notes', id: 999 })).isError).toBe(true)
    expect((await call(client, 'crud_create', { model: 'notes', data: { nope: 1 } })).isError).toBe(
      true,
    )
    const pending = await call(client, 'crud_update', {
      model: 'notes',
      id: note.id,
      data: { title: 'needs approval' },
    })
    expect(pending.isError).toBe(true)
    await trail.flush()
    const entries = (await log.list()).reverse()
    expect(entries.map((e) => [e.tool, e.model, e.outcome, e.recordIds, e.fields])).toEqual([
      ['crud_create', 'notes', 'ok', [note.id], ['title']],
      ['crud_create', 'users', 'refused', [], ['name']],
      ['crud_update', 'notes', 'refused', [note.id], ['title']],
      ['crud_delete', 'notes', 'error', [999], []],
      ['crud_create', 'notes', 'error', [], ['nope']],
      ['crud_update', 'notes', 'awaiting_approval', [note.id], ['title']],
    ])
    expect(entries[2]!.message).toBe('Not allowed: crud_update on notes')
    expect(entries[3]!.message).toMatch(/No notes record/)
    expect(await log.list({ outcome: 'refused' })).toHaveLength(2)
  })

  it('records values only when the app opts in, and never a credential field', async () => {
    const client = await connect({ values: true })
    await ok(client, 'crud_create', { model: 'notes', data: { title: 'Kept', priority: 2 } })
    await call(client, 'crud_create', {
      model: 'notes',
      data: { title: 'Sneaky', password_hash: 'hunter2', api_secret: 's3cr3t' },
    })
    await trail.flush()
    const [sneaky, kept] = await log.list()
    expect(kept!.values).toEqual({ title: 'Kept', priority: 2 })
    expect(sneaky!.outcome).toBe('error')
    expect(sneaky!.fields).toEqual(['title', 'password_hash', 'api_secret'])
    expect(sneaky!.values).toEqual({ title: 'Sneaky' })
    expect(JSON.stringify(await log.list())).not.toMatch(/hunter2|s3cr3t/)
  })

  it('records the calls of an app that uses createCrud with a caller', async () => {
    trail = createAuditTrail({ database, flushIntervalMs: 3_600_000 })
    const crud = createCrud({ database, models, caller, access, audit: trail })
    const note = await crud.create({ model: 'notes', data: { title: 'From the app' } })
    await expect(crud.delete({ model: 'users', id: 1 })).rejects.toThrow(/not allowed/)
    await trail.close()
    const entries = (await log.list()).reverse()
    expect(entries.map((e) => [e.tool, e.outcome, e.clientId, e.recordIds])).toEqual([
      ['crud_create', 'ok', 'client-1', [note.id]],
      ['crud_delete', 'refused', 'client-1', [1]],
    ])
  })
})
