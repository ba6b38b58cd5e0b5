import type { Command } from 'commander'
import pc from 'picocolors'
import { type RevokeResult, revokeApiKey } from '../../api/provider/management.ts'
import type { Clock } from '../../core/clock.ts'
import type { Env } from '../../core/config/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { apiKeyCommandError, formatTime } from './api-key-shared.ts'

export interface ApiKeyRevokeOptions {
  cwd?: string
  processEnv?: Env
  clock?: Clock
  print?: (line: string) => void
}

/**
 * `kiln api-key:revoke <id|prefix>`: sets `revoked_at`. Instances caching the key hear of it
 * from the database at once (Postgres NOTIFY, SQLite's data version).
 */
export async function runApiKeyRevoke(
  target: string,
  options: ApiKeyRevokeOptions = {},
): Promise<RevokeResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const app = await openAppDatabase({ cwd: options.cwd, env: options.processEnv })
  let result: RevokeResult
  try {
    result = await revokeApiKey(app.database, target, { clock: options.clock })
  } catch (error) {
    throw apiKeyCommandError(error, app.description)
  } finally {
    await app.close()
  }
  const { record } = result
  const label = `API key ${record.id} (${record.name}, ${record.prefix})`
  if (result.changed) {
    print(`${pc.green('✓')} Revoked ${label}: it is refused from now on`)
  } else {
    print(`${label} was already revoked at ${formatTime(record.revokedAt)}`)
  }
  return result
}

export function register(program: Command): void {
  program
    .command('api-key:revoke')
    .description('Revoke an API key by id or 16-character prefix')
    .argument('<id|prefix>', 'the key id (see api-key:list) or its prefix, e.g. kl_live_AbCd1234')
    .action(async (target: string) => {
      await runApiKeyRevoke(target)
    })
}
