import type { Command } from 'commander'
import pc from 'picocolors'
import { type Clock, systemClock } from '../../core/clock.ts'
import type { Env } from '../../core/config/index.ts'
import { missingTable } from '../../core/missing-table.ts'
import {
  AUDIT_OUTCOMES,
  type AuditOutcome,
  type AuditQuery,
  type AuditRecord,
  createAuditLog,
  MAX_AUDIT_LIMIT,
} from '../../db/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { CliError } from '../cli-error.ts'
import { formatTime } from './api-key-shared.ts'

export interface AuditCommandOptions {
  user?: string
  client?: string
  model?: string
  tool?: string
  outcome?: string
  /** `30m`, `12h`, `7d`, `2w`, or a date / ISO time. */
  since?: string
  limit?: string
  json?: boolean
  cwd?: string
  processEnv?: Env
  clock?: Clock
  print?: (line: string) => void
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** `--since`: a duration back from now (`30m`, `12h`, `7d`, `2w`) or a date or ISO time. */
export function parseSince(text: string, now: number): Date {
  const relative = /^(\d+)([mhdw])$/.exec(text.trim())
  if (relative) return new Date(now - Number(relative[1]) * UNITS[relative[2]!]!)
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const date = new Date(text)
    if (!Number.isNaN(date.getTime())) return date
  }
  throw new CliError(
    `--since ${JSON.stringify(text)} is neither a duration (30m, 12h, 7d, 2w) nor a date (2026-01-31)`,
  )
}

/** The filters of the command line, checked: a bad one is a one-line error and nothing is read. */
export function auditQueryOf(options: AuditCommandOptions, now: number): AuditQuery {
  const outcome = options.outcome?.replace(/ /g, '_')
  if (outcome !== undefined && !AUDIT_OUTCOMES.includes(outcome as AuditOutcome)) {
    throw new CliError(`--outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`)
  }
  const limit = options.limit === undefined ? 50 : Number(options.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
    throw new CliError(`--limit must be a whole number from 1 to ${MAX_AUDIT_LIMIT}`)
  }
  return {
    userId: options.user,
    clientId: options.client,
    model: options.model,
    tool: options.tool,
    outcome: outcome as AuditOutcome | undefined,
    since: options.since === undefined ? undefined : parseSince(options.since, now),
    limit,
  }
}

/** `kilnjs audit`: the data tools' audit trail, newest first, filtered. */
export async function runAudit(options: AuditCommandOptions = {}): Promise<AuditRecord[]> {
  const print = options.print ?? ((line: string) => console.log(line))
  const query = auditQueryOf(options, (options.clock ?? systemClock).now())
  const app = await openAppDatabase({ cwd: options.cwd, env: options.processEnv })
  let entries: AuditRecord[]
  try {
    entries = await createAuditLog(app.database).list(query)
  } catch (error) {
    throw auditCommandError(error, app.description)
  } finally {
    await app.close()
  }
  if (options.json) {
    print(JSON.stringify(entries.map(toJson), null, 2))
    return entries
  }
  if (entries.length === 0) {
    print('No audit entries match.')
    return entries
  }
  const header = ['TIME', 'USER', 'CLIENT', 'TOOL', 'MODEL', 'IDS', 'FIELDS', 'OUTCOME', 'MS']
  const rows = entries.map((entry) => [
    formatTime(entry.at),
    entry.userId ?? '—',
    entry.clientId ?? '—',
    entry.tool,
    entry.model,
    entry.recordIds.join(',') || '—',
    entry.fields.join(',') || '—',
    entry.message ? `${entry.outcome}: ${entry.message}` : entry.outcome,
    String(entry.durationMs),
  ])
  const widths = header.map((title, i) =>
    Math.min(60, Math.max(title.length, ...rows.map((row) => row[i]!.length))),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  print(pc.bold(line(header)))
  for (const row of rows) print(line(row))
  return entries
}

function toJson(entry: AuditRecord) {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    user_id: entry.userId,
    tenant_id: entry.tenantId,
    client_id: entry.clientId,
    tool: entry.tool,
    model: entry.model,
    record_ids: entry.recordIds,
    fields: entry.fields,
    outcome: entry.outcome,
    duration_ms: entry.durationMs,
    message: entry.message,
    values: entry.values,
  }
}

function auditCommandError(error: unknown, description: string): Error {
  if (missingTable(error) !== undefined) {
    return new CliError(
      `${description} has no kiln_mcp_audit table yet: run \`kilnjs migrate\` first`,
      { cause: error },
    )
  }
  return error instanceof Error ? error : new Error(String(error))
}

export function register(program: Command): void {
  program
    .command('audit')
    .description('List the MCP data tools’ audit trail, newest first')
    .option('--user <id>', 'only this user’s calls')
    .option('--client <client_id>', 'only this OAuth client’s calls')
    .option('--model <name>', 'only calls on this model (resource name)')
    .option('--tool <name>', 'only this tool (crud_list, crud_create, crud_update, crud_delete)')
    .option('--outcome <outcome>', `only this outcome (${AUDIT_OUTCOMES.join(', ')})`)
    .option('--since <when>', 'only since a duration ago (30m, 12h, 7d, 2w) or a date')
    .option('--limit <n>', 'at most n entries (default 50)')
    .option('--json', 'print JSON')
    .action(async (options: AuditCommandOptions) => {
      await runAudit(options)
    })
}
