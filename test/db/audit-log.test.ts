import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/core/index.ts'
import {
  type AuditEntry,
  type AuditLog,
  createAuditLog,
  type Database,
  migrate,
} from '../../src/db/index.ts'
import { createAuditTrail } from '../../src/mcp/index.ts'
import { captureLog, execSql } from '../api/support.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'

const T0 = Date.UTC(2026, 2, 1, 12)

function entry(overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    at: new Date(T0),
    userId: '1',
    tenantId: null,
    clientId: 'client-a',
    tool: 'crud_list',
    model: 'posts',
    recordIds: [1, 2],
    fields: [],
    outcome: 'ok',
    durationMs: 3,
    message: null,
    values: null,
    ...overrides,
  }
}

describeEachDatabase('the audit table (kiln_mcp_audit)', (backend) => {
  let test: TestDatabase
  let database: Database
  let log: AuditLog

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    log = createAuditLog(database)
  })
  afterAll(async () => {
    await test.cleanup()
  })
  beforeEach(() => execSql(database, 'DELETE FROM kiln_mcp_audit'))

  it('stores every field of an entry and reads it back', async () => {
    const written = entry({
      userId: '42',
      tenantId: 't-1',
      tool: 'crud_update',
      recordIds: ['abc'],
      fields: ['title', 'body'],
      outcome: 'refused',
      durationMs: 12.6,
      message: 'Not allowed: crud_update on posts',
      values: { title: 'New', body: null },
    })
    await log.insert([written])
    const [read] = await log.list()
    expect(read).toEqual({ ...written, id: expect.any(Number), durationMs: 13 })
  })

  it('lists newest first, filters by user, client, model, tool, outcome and since, and pages', async () => {
    await log.insert([
      entry({ at: new Date(T0), userId: '1', clientId: 'a' }),
      entry({ at: new Date(T0 + 1000), userId: '2', clientId: 'a', tool: 'crud_create' }),
      entry({ at: new Date(T0 + 2000), userId: '1', clientId: 'b', model: 'comments' }),
      entry({ at: new Date(T0 + 3000), userId: '1', clientId: 'a', outcome: 'error' }),
      entry({ at: new Date(T0 + 3000), userId: '1', clientId: 'a', outcome: 'awaiting_approval' }),
    ])
    const all = await log.list()
    expect(all.map((e) => e.at.getTime())).toEqual([T0 + 3000, T0 + 3000, T0 + 2000, T0 + 1000, T0])
    // Equal times: the later insert first.
    expect(all[0]!.outcome).toBe('awaiting_approval')
    expect(all[0]!.id).toBeGreaterThan(all[1]!.id)
    expect((await log.list({ userId: '2' })).map((e) => e.tool)).toEqual(['crud_create'])
    expect(await log.list({ clientId: 'b' })).toHaveLength(1)
    expect((await log.list({ model: 'comments' }))[0]!.clientId).toBe('b')
    expect(await log.list({ tool: 'crud_create' })).toHaveLength(1)
    expect(await log.list({ outcome: 'error' })).toHaveLength(1)
    expect(await log.list({ since: new Date(T0 + 2000) })).toHaveLength(3)
    expect(await log.list({ userId: '1', clientId: 'a' })).toHaveLength(3)
    const first = await log.list({ limit: 2 })
    const second = await log.list({ limit: 2, offset: 2 })
    const third = await log.list({ limit: 2, offset: 4 })
    expect([...first, ...second, ...third].map((e) => e.id)).toEqual(all.map((e) => e.id))
    await expect(log.list({ limit: 0 })).rejects.toThrow(RangeError)
    await expect(log.list({ limit: 1001 })).rejects.toThrow(RangeError)
    await expect(log.list({ offset: -1 })).rejects.toThrow(RangeError)
  })

  it('prunes entries older than a time, and only those', async () => {
    await log.insert([
      entry({ at: new Date(T0 - 2000) }),
      entry({ at: new Date(T0 - 1) }),
      entry({ at: new Date(T0) }),
    ])
    expect(await log.prune(new Date(T0))).toBe(2)
    expect((await log.list()).map((e) => e.at.getTime())).toEqual([T0])
  })

  describe('the buffered trail', () => {
    it('writes nothing on the call, a full batch at once, and the rest on close', async () => {
      const trail = createAuditTrail({ database, flushIntervalMs: 3_600_000, batchSize: 3 })
      trail.record(entry({ recordIds: [1] }))
      trail.record(entry({ recordIds: [2] }))
      // Recording is synchronous and never touches the database.
      expect(await log.list()).toHaveLength(0)
      trail.record(entry({ recordIds: [3] }))
      trail.record(entry({ recordIds: [4] }))
      await trail.flush()
      expect(await log.list()).toHaveLength(4)
      trail.record(entry({ recordIds: [5] }))
      await trail.close()
      expect((await log.list({ limit: 10 })).map((e) => e.recordIds[0]).sort()).toEqual([
        1, 2, 3, 4, 5,
      ])
    })

    it('loses nothing on shutdown: close writes every buffered entry, in batches', async () => {
      const trail = createAuditTrail({ database, flushIntervalMs: 3_600_000, batchSize: 50 })
      for (let i = 0; i < 120; i++) trail.record(entry({ recordIds: [i] }))
      await trail.close()
      expect(await log.list({ limit: 1000 })).toHaveLength(120)
    })

    it('flushes on its interval without being asked', async () => {
      const trail = createAuditTrail({ database, flushIntervalMs: 20, batchSize: 100 })
      trail.record(entry())
      await expect.poll(async () => (await log.list()).length, { timeout: 2000 }).toBe(1)
      await trail.close()
    })

    it('prunes past the retention (default 90 days)', async () => {
      const clock = new ManualClock(T0)
      const day = 86_400_000
      await log.insert([
        entry({ at: new Date(T0 - 91 * day) }),
        entry({ at: new Date(T0 - 89 * day) }),
      ])
      const trail = createAuditTrail({ database, clock })
      expect(await trail.prune()).toBe(1)
      const short = createAuditTrail({ database, clock, retentionDays: 30 })
      expect(await short.prune()).toBe(1)
      const forever = createAuditTrail({ database, clock, retentionDays: null })
      expect(await forever.prune()).toBe(0)
      await Promise.all([trail.close(), short.close(), forever.close()])
    })

    it('keeps entries when the database fails and writes them once it is back', async () => {
      const capture = captureLog()
      let failing = true
      const failingLog: AuditLog = {
        ...log,
        insert: (entries) => (failing ? Promise.reject(new Error('down')) : log.insert(entries)),
      }
      const trail = createAuditTrail({
        log: failingLog,
        flushIntervalMs: 3_600_000,
        logger: capture.logger,
      })
      trail.record(entry())
      await trail.flush()
      expect(capture.text()).toContain('could not write the audit trail')
      failing = false
      await trail.close()
      expect(await log.list()).toHaveLength(1)
    })

    it('refuses bad settings at start-up', () => {
      expect(() => createAuditTrail({})).toThrow(TypeError)
      expect(() => createAuditTrail({ database, batchSize: 0 })).toThrow(/batchSize/)
      expect(() => createAuditTrail({ database, retentionDays: -1 })).toThrow(/retentionDays/)
    })
  })
})
