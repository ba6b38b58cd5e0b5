import type { Command } from 'commander'
import pc from 'picocolors'
import { type ApiKeyRecord, apiKeyStatus, listApiKeys } from '../../api/provider/management.ts'
import { parseScopesColumn } from '../../api/provider/scopes.ts'
import { type Clock, systemClock } from '../../core/clock.ts'
import type { Env } from '../../core/config/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { apiKeyCommandError, formatTime } from './api-key-shared.ts'

export interface ApiKeyListOptions {
  json?: boolean
  cwd?: string
  processEnv?: Env
  clock?: Clock
  print?: (line: string) => void
}

/** `kiln api-key:list`: every key with its status; never a key or a hash. */
export async function runApiKeyList(options: ApiKeyListOptions = {}): Promise<ApiKeyRecord[]> {
  const print = options.print ?? ((line: string) => console.log(line))
  const now = (options.clock ?? systemClock).now()
  const app = await openAppDatabase({ cwd: options.cwd, env: options.processEnv })
  let keys: ApiKeyRecord[]
  try {
    keys = await listApiKeys(app.database)
  } catch (error) {
    throw apiKeyCommandError(error, app.description)
  } finally {
    await app.close()
  }
  if (options.json) {
    print(
      JSON.stringify(
        keys.map((key) => ({
          id: key.id,
          name: key.name,
          prefix: key.prefix,
          scopes: parseScopesColumn(key.scopes) ?? null,
          status: apiKeyStatus(key, now),
          created_at: key.createdAt.toISOString(),
          last_used_at: key.lastUsedAt?.toISOString() ?? null,
          expires_at: key.expiresAt?.toISOString() ?? null,
          revoked_at: key.revokedAt?.toISOString() ?? null,
        })),
        null,
        2,
      ),
    )
    return keys
  }
  if (keys.length === 0) {
    print('No API keys yet. Make one with: kilnjs make:api-key <name> --save')
    return keys
  }
  const rows = keys.map((key) => {
    const scopes = parseScopesColumn(key.scopes)
    return [
      String(key.id),
      key.name,
      key.prefix,
      scopes === undefined ? '(invalid scopes)' : scopes.join(',') || '—',
      apiKeyStatus(key, now),
      formatTime(key.createdAt),
      formatTime(key.lastUsedAt),
      formatTime(key.expiresAt),
    ]
  })
  const header = ['ID', 'NAME', 'PREFIX', 'SCOPES', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES']
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i]!.length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  print(pc.bold(line(header)))
  for (const row of rows) print(line(row))
  return keys
}

export function register(program: Command): void {
  program
    .command('api-key:list')
    .description('List API keys (id, name, prefix, scopes, status, dates; never the key)')
    .option('--json', 'print JSON')
    .action(async (options: ApiKeyListOptions) => {
      await runApiKeyList(options)
    })
}
