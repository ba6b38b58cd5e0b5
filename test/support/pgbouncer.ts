import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, type RunningProcess, track, waitFor } from './processes.ts'

/** Debian's package puts it here; `PGBOUNCER` names another. */
export const pgbouncerBinary = process.env.PGBOUNCER || '/usr/sbin/pgbouncer'

export interface PgBouncerOptions {
  /** The PostgreSQL server behind it (user, host and port are read; the database is per URL). */
  serverUrl: string
  /** Where it listens; a free port by default. */
  port?: number
  poolMode?: 'transaction' | 'session'
  poolSize?: number
}

export interface RunningPgBouncer {
  port: number
  /** `postgres://user@127.0.0.1:<port>/<database>`: any database of the server, pooled. */
  urlFor(database: string): string
  process: RunningProcess
  stop(): Promise<void>
}

/**
 * The `pgbouncer.ini` of a pooler in front of `serverUrl`: every database of that server
 * (`*`), pooled in transaction mode by default (what hosted poolers run), clients trusted on
 * 127.0.0.1, logs on standard error. PgBouncer 1.18 knows no `max_prepared_statements`: a
 * named statement prepared through it lands on whichever server connection it was given.
 */
export function pgbouncerConfig(
  options: PgBouncerOptions & { port: number; dir: string; daemon?: boolean },
): string {
  const server = new URL(options.serverUrl)
  const user = decodeURIComponent(server.username || 'postgres')
  return `[databases]
* = host=${server.hostname} port=${server.port || 5432} user=${user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${options.port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(options.dir, 'userlist.txt')}
pool_mode = ${options.poolMode ?? 'transaction'}
default_pool_size = ${options.poolSize ?? 10}
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits
server_login_retry = 1
${options.daemon ? `logfile = ${join(options.dir, 'pgbouncer.log')}\npidfile = ${join(options.dir, 'pgbouncer.pid')}\n` : ''}`
}

/** PgBouncer refuses to run as root: as root, it is told to drop to the `postgres` user. */
export function pgbouncerUserArgs(): string[] {
  return process.getuid?.() === 0 ? ['-u', 'postgres'] : []
}

/**
 * Starts PgBouncer in the foreground with a config of its own in a temporary folder, waits
 * until a query passes through it, and stops it (and removes the folder) on `stop`. Run as
 * root it drops to the `postgres` user, as PgBouncer refuses to run as root.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<RunningPgBouncer> {
  const port = options.port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'kiln-pgbouncer-'))
  const server = new URL(options.serverUrl)
  const user = decodeURIComponent(server.username || 'postgres')
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`)
  writeFileSync(join(dir, 'pgbouncer.ini'), pgbouncerConfig({ ...options, port, dir }))
  chmodSync(dir, 0o755)
  const child = spawn(pgbouncerBinary, [...pgbouncerUserArgs(), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const running = track(child)
  const urlFor = (database: string) => {
    const url = new URL(`postgres://127.0.0.1:${port}/${database}`)
    url.username = server.username || 'postgres'
    return url.toString()
  }
  const stop = async () => {
    await running.stop(5_000)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited:\n${running.output()}`)
      const client = new pg.Client({ connectionString: urlFor(server.pathname.slice(1) || user) })
      client.on('error', () => {})
      try {
        await client.connect()
        await client.query('select 1')
        return true
      } catch {
        return false
      } finally {
        await client.end().catch(() => {})
      }
    }, `pgbouncer on port ${port}`)
  } catch (error) {
    await stop()
    throw error
  }
  return { port, urlFor, process: running, stop }
}
