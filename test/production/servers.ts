import { execFile, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type RunningPgBouncer, startPgBouncer } from '../support/pgbouncer.ts'
import { freePort, type RunningProcess, track, waitFor } from '../support/processes.ts'

/**
 * Servers a test owns, so it may restart them: the shared PostgreSQL and Redis of the test
 * services are never restarted (other suites use them at the same time).
 */

/** The newest PostgreSQL server binaries Debian installed, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin')
}

export const serversAvailable =
  postgresBinDir() !== undefined &&
  (() => {
    try {
      execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })()

/**
 * Runs a PostgreSQL command without blocking the event loop (the test's load goes on while
 * the server restarts). PostgreSQL refuses to run as root: as root, it runs as `postgres`.
 */
async function asPostgres(command: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0
  await promisify(execFile)(
    asRoot ? 'runuser' : command,
    asRoot ? ['-u', 'postgres', '--', command, ...args] : args,
  )
}

export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  url: string
  /**
   * `pg_ctl stop -m fast` (sessions are ended), `whileDown`, then `pg_ctl start`: the server
   * is back when it returns.
   */
  restart(whileDown?: () => Promise<void>): Promise<void>
  /**
   * SIGSTOP to the server and every backend: it stops answering without closing a connection,
   * as a frozen host does; `thaw` sends SIGCONT to the same processes.
   */
  freeze(): Promise<void>
  thaw(): Promise<void>
  stop(): Promise<void>
}

/** A PostgreSQL server of its own: `initdb` into a temporary folder, started on a free port. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'kiln-own-pg-'))
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  await asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
  ])
  const pgCtl = (...args: string[]) =>
    asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '60', ...args])
  // With `-l`: a server writing to this command's output would keep it open for ever.
  const start = () =>
    pgCtl(
      '-l',
      join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`,
      'start',
    )
  await start()
  let frozen: number[] = []
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async freeze() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      const children = await promisify(execFile)('pgrep', ['-P', String(postmaster)]).then(
        ({ stdout }) => stdout.split('\n').filter(Boolean).map(Number),
        () => [],
      )
      frozen = [postmaster, ...children]
      for (const pid of frozen) process.kill(pid, 'SIGSTOP')
    },
    async thaw() {
      for (const pid of frozen) process.kill(pid, 'SIGCONT')
      frozen = []
    },
    async restart(whileDown) {
      await pgCtl('-m', 'fast', 'stop')
      await whileDown?.()
      await start()
    },
    async stop() {
      for (const pid of frozen) process.kill(pid, 'SIGCONT')
      try {
        await pgCtl('-m', 'immediate', 'stop')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

export interface OwnRedis {
  url: string
  /**
   * Stops it (SIGTERM: a clean shutdown, its append-only file complete), `whileDown`, then
   * starts it again on the same port.
   */
  restart(whileDown?: () => Promise<void>): Promise<void>
  /** SIGSTOP: it keeps its connections open and answers nothing; `thaw` sends SIGCONT. */
  freeze(): Promise<void>
  thaw(): Promise<void>
  stop(): Promise<void>
}

/** SIGSTOP and SIGCONT to one process: a frozen host that keeps its connections open. */
function freezable(pid: () => number | undefined) {
  let frozen: number | undefined
  return {
    async freeze() {
      frozen = pid()
      if (frozen !== undefined) process.kill(frozen, 'SIGSTOP')
    },
    async thaw() {
      if (frozen !== undefined) process.kill(frozen, 'SIGCONT')
      frozen = undefined
    },
  }
}

/**
 * A Redis of its own on a free port, persisted as production runs it (`appendonly yes`,
 * `appendfsync always`): sessions, rate-limit counters and queued jobs outlive a restart.
 */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'kiln-own-redis-'))
  const url = `redis://127.0.0.1:${port}`
  let running: RunningProcess
  const start = async () => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    running = track(child)
    await waitFor(() => {
      if (child.exitCode !== null) throw new Error(`redis-server exited:\n${running.output()}`)
      return running.output().includes('Ready to accept connections')
    }, `redis-server on port ${port}`)
  }
  await start()
  const freezing = freezable(() => running.child.pid)
  return {
    url,
    ...freezing,
    async restart(whileDown) {
      await running.stop(10_000)
      await whileDown?.()
      await start()
    },
    async stop() {
      await freezing.thaw()
      await running.stop(10_000)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface OwnPgBouncer extends RunningPgBouncer {
  /** SIGSTOP to the pooler: it keeps its connections open and answers nothing. */
  freeze(): Promise<void>
  thaw(): Promise<void>
}

/** A PgBouncer of its own (transaction mode) in front of `serverUrl`, which it may freeze. */
export async function startOwnPgBouncer(serverUrl: string): Promise<OwnPgBouncer> {
  const bouncer = await startPgBouncer({ serverUrl })
  const freezing = freezable(() => bouncer.process.child.pid)
  return {
    ...bouncer,
    ...freezing,
    async stop() {
      await freezing.thaw()
      await bouncer.stop()
    },
  }
}
