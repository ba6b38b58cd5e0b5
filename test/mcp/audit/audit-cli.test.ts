import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CliError } from '../../../src/cli/cli-error.ts'
import { auditQueryOf, parseSince, runAudit } from '../../../src/cli/commands/audit.ts'
import { ManualClock } from '../../../src/core/index.ts'
import { type AuditEntry, createAuditLog, createDatabase, migrate } from '../../../src/db/index.ts'
import { execSql, migratedDatabase } from '../../api/support.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'

const root = resolve(import.meta.dirname, '../../..')
const sqliteFixture = join(root, 'test/fixtures/sqlite-app')
const NOW = Date.UTC(2026, 2, 10, 12)
const HOUR = 3_600_000

function capture() {
  const lines: string[] = []
  return {
    print: (line: string) => lines.push(stripVTControlCharacters(line)),
    text: () => lines.join('\n'),
  }
}

function entry(overrides: Partial<AuditEntry>): AuditEntry {
  return {
    at: new Date(NOW - HOUR),
    userId: '1',
    tenantId: null,
    clientId: 'claude',
    tool: 'crud_list',
    model: 'posts',
    recordIds: [],
    fields: [],
    outcome: 'ok',
    durationMs: 4,
    message: null,
    values: null,
    ...overrides,
  }
}

describe('kilnjs audit: arguments', () => {
  it('reads --since as a duration back from now or as a date', () => {
    expect(parseSince('30m', NOW).getTime()).toBe(NOW - 30 * 60_000)
    expect(parseSince('12h', NOW).getTime()).toBe(NOW - 12 * HOUR)
    expect(parseSince('7d', NOW).getTime()).toBe(NOW - 7 * 24 * HOUR)
    expect(parseSince('2w', NOW).getTime()).toBe(NOW - 14 * 24 * HOUR)
    expect(parseSince('2026-03-01', NOW).toISOString()).toBe('2026-03-01T00:00:00.000Z')
    expect(() => parseSince('yesterday', NOW)).toThrow(CliError)
    expect(() => parseSince('2026-13-45', NOW)).toThrow(CliError)
  })

  it('refuses an unknown outcome or a bad limit before opening anything', () => {
    expect(auditQueryOf({ outcome: 'awaiting approval' }, NOW).outcome).toBe('awaiting_approval')
    for (const outcome of ['approved', 'client confirmed', 'denied', 'expired', 'cancelled']) {
      expect(auditQueryOf({ outcome }, NOW).outcome).toBe(outcome.replace(' ', '_'))
    }
    expect(() => auditQueryOf({ outcome: 'maybe' }, NOW)).toThrow(/--outcome must be one of ok/)
    expect(() => auditQueryOf({ limit: '0' }, NOW)).toThrow(/--limit/)
    expect(() => auditQueryOf({ limit: 'ten' }, NOW)).toThrow(/--limit/)
  })
})

describeEachDatabase(
  'kilnjs audit',
  (backend) => {
    let test: TestDatabase
    let dir: string
    let url: string
    // The repository root is a Postgres app; the SQLite fixture app is the SQLite one.
    const cwd = backend.dialect === 'postgres' ? root : sqliteFixture
    const clock = new ManualClock(NOW)

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kiln-audit-cli-'))
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
    beforeEach(async () => {
      await execSql(test.database, 'DELETE FROM kiln_mcp_audit')
      await createAuditLog(test.database).insert([
        entry({ at: new Date(NOW - 3 * 24 * HOUR), tool: 'crud_create', fields: ['title'] }),
        entry({ userId: '2', clientId: 'cursor', model: 'comments' }),
        entry({
          at: new Date(NOW - 10 * 60_000),
          tool: 'crud_delete',
          recordIds: [5],
          outcome: 'refused',
          message: 'Not allowed: crud_delete on posts',
        }),
      ])
    })
    const processEnv = () => ({ DATABASE_URL: url })

    it('lists newest first and filters by user, client, model, tool, outcome and since', async () => {
      const all = await runAudit({ cwd, processEnv: processEnv(), clock, print: () => {} })
      expect(all.map((e) => e.tool)).toEqual(['crud_delete', 'crud_list', 'crud_create'])
      const run = (options: Parameters<typeof runAudit>[0]) =>
        runAudit({ cwd, processEnv: processEnv(), clock, print: () => {}, ...options })
      expect((await run({ user: '2' })).map((e) => e.model)).toEqual(['comments'])
      expect((await run({ client: 'claude' })).length).toBe(2)
      expect((await run({ model: 'posts' })).length).toBe(2)
      expect((await run({ tool: 'crud_create' })).map((e) => e.fields)).toEqual([['title']])
      expect((await run({ outcome: 'refused' })).map((e) => e.recordIds)).toEqual([[5]])
      expect((await run({ since: '1d' })).length).toBe(2)
      expect((await run({ since: '30m' })).length).toBe(1)
      expect((await run({ limit: '1' })).length).toBe(1)
    })

    it('prints a table, or JSON with --json', async () => {
      const out = capture()
      await runAudit({ cwd, processEnv: processEnv(), clock, print: out.print })
      const lines = out.text().split('\n')
      expect(lines[0]).toMatch(
        /^TIME\s+USER\s+CLIENT\s+TOOL\s+MODEL\s+IDS\s+FIELDS\s+OUTCOME\s+MS$/,
      )
      expect(lines[1]).toContain('crud_delete')
      expect(lines[1]).toContain('refused: Not allowed: crud_delete on posts')
      const json = capture()
      await runAudit({ cwd, processEnv: processEnv(), clock, json: true, print: json.print })
      const parsed = JSON.parse(json.text()) as Record<string, unknown>[]
      expect(parsed[0]).toMatchObject({
        user_id: '1',
        client_id: 'claude',
        tool: 'crud_delete',
        model: 'posts',
        record_ids: [5],
        outcome: 'refused',
        duration_ms: 4,
      })
      const none = capture()
      await runAudit({ cwd, processEnv: processEnv(), user: 'nobody', print: none.print })
      expect(none.text()).toBe('No audit entries match.')
    })

    it('runs as `npx kilnjs audit` and says to migrate when the table is missing', async () => {
      const listed = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          process.execPath,
          [join(root, 'bin/kiln.js'), 'audit', '--outcome', 'refused', '--json'],
          { cwd, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...processEnv() } },
          (error, stdout, stderr) =>
            done({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
        )
      })
      expect(listed.code, listed.stderr).toBe(0)
      expect(JSON.parse(listed.stdout)).toHaveLength(1)
      await execSql(test.database, 'DROP TABLE kiln_mcp_audit')
      try {
        await expect(runAudit({ cwd, processEnv: processEnv(), print: () => {} })).rejects.toThrow(
          /has no kiln_mcp_audit table yet: run `kilnjs migrate` first/,
        )
      } finally {
        await execSql(
          test.database,
          "DELETE FROM kiln_migrations WHERE name LIKE 'kiln/%_mcp_audit.sql'",
        )
        await migrate(test.database, { logger: { info: () => {}, warn: () => {} } })
      }
    })
  },
  { only: ['sqlite', 'postgres'] },
)
