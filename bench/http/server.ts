/**
 * Benchmark servers run as child processes: the load generator (wrk) and the runner stay out of
 * their CPU time, which is read from /proc per round. A server module calls `serverReady(info)`
 * once it listens; `startServer(file, env)` forks it and resolves with that info and its pid.
 *
 * `KILN_BENCH_CPU_PROF=<dir>` starts every server with `node --cpu-prof --cpu-prof-dir=<dir>`:
 * each writes a .cpuprofile when it is stopped (open it in Chrome DevTools or speedscope).
 *
 * Every server, subject and baseline alike, runs with the same `serverNodeFlags()`: the young
 * generation kiln recommends for servers (docs/performance.md, "Node's young generation").
 */
import { type ChildProcess, fork } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import type { Server, ServerResponse } from 'node:http'
import { Session } from 'node:inspector'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'

export interface ServerProcess<Info> {
  pid: number
  /** What the server sent with `serverReady` (its ports, keys, …). */
  info: Info
  /** Ends the process (it exits normally, so a CPU profile is written) and waits for it. */
  stop(): Promise<void>
}

export interface StartServerOptions {
  /** Environment added to this process's. */
  env?: Record<string, string>
  /** Extra Node flags. */
  execArgv?: string[]
  /**
   * Working directory: tsx reads the tsconfig.json found there, whose `paths` say where
   * `kilnjs/*` imports go (a checkout of another commit must resolve them to its own src/).
   */
  cwd?: string
}

/**
 * The Node flags every benchmark server runs with, those kiln's start script passes:
 * `--max-semi-space-size=<MiB>` from `KILN_BENCH_SEMI_SPACE` (default 64; `0` leaves Node's
 * default of 16 MiB), so a server with 50 requests in flight is not measured scavenging every
 * few hundred requests; and `--no-parallel-scavenge` (`KILN_BENCH_PARALLEL_SCAVENGE=1` leaves
 * it out), since on 2 cores shared with the database a scavenge that waits for helper threads
 * stalls every request in flight (docs/performance.md, "The tail at equal load"). Subject and
 * baseline always run on the same runtime settings.
 */
export function serverNodeFlags(): string[] {
  const mib = Number(process.env.KILN_BENCH_SEMI_SPACE ?? 64)
  if (!Number.isInteger(mib) || mib < 0) {
    throw new TypeError("KILN_BENCH_SEMI_SPACE must be a whole number of MiB (0: Node's default)")
  }
  const serial = process.env.KILN_BENCH_PARALLEL_SCAVENGE === '1' ? [] : ['--no-parallel-scavenge']
  // KILN_BENCH_NODE_FLAGS: more flags for every server, e.g. `--trace-gc` to see its pauses.
  const more = (process.env.KILN_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)
  return [...(mib === 0 ? [] : [`--max-semi-space-size=${mib}`]), ...serial, ...more]
}

/** Forks `file` (a .ts module run through tsx) and waits for its `serverReady`. */
export async function startServer<Info>(
  file: string | URL,
  options: StartServerOptions = {},
): Promise<ServerProcess<Info>> {
  const profileDir = process.env.KILN_BENCH_CPU_PROF
  const execArgv = [
    ...serverNodeFlags(),
    '--import',
    'tsx',
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(options.execArgv ?? []),
  ]
  const child: ChildProcess = fork(file instanceof URL ? file.pathname : file, [], {
    execArgv,
    env: { ...process.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const info = await new Promise<Info>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Info))
    child.once('exit', (code) => reject(new Error(`benchmark server ${file} exited with ${code}`)))
  })
  return {
    pid: child.pid as number,
    info,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/**
 * Called by a server module once it listens: reports `info` to the runner, and exits when the
 * runner stops it or goes away (so no server outlives its benchmark).
 */
export function serverReady(info: unknown, close: () => Promise<void> = async () => {}): void {
  let closing = false
  const allocations = sampleAllocations()
  const exit = async () => {
    if (closing) return
    closing = true
    await allocations?.()
    await close().catch(() => {})
    process.exit(0)
  }
  process.on('SIGTERM', exit)
  process.on('disconnect', exit)
  process.send?.(info)
}

/**
 * With KILN_BENCH_ALLOC_PROF=<dir>, samples every allocation from the moment the server is ready,
 * the short-lived ones included (what the young generation's collections cost), and writes a
 * `.heapprofile` (Chrome DevTools' format) into `dir` when the server stops. Returns the writer.
 */
function sampleAllocations(): (() => Promise<void>) | undefined {
  const dir = process.env.KILN_BENCH_ALLOC_PROF
  if (!dir) return undefined
  const session = new Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    )
  void post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  return async () => {
    const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: unknown }
    writeFileSync(join(dir, `${process.pid}.heapprofile`), JSON.stringify(profile))
  }
}

/** Listens on 127.0.0.1, a free port; keeps idle connections longer than a round of the other side. */
export function listen(server: Server): Promise<number> {
  server.keepAliveTimeout = 120_000
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })
}

/** The hand-written floors' answer: `body` as JSON, with its length, as a plain node:http server writes it. */
export function writeJson(res: ServerResponse, body: unknown): void {
  const json = JSON.stringify(body)
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  })
  res.end(json)
}

/** Serves a fetch handler (a Hono app's `fetch`) with @hono/node-server, as kiln's apps run. */
export function serveFetch(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<number> {
  return new Promise((resolve) => {
    const server = serve({ fetch, hostname: '127.0.0.1', port: 0 }, (info) => resolve(info.port))
    ;(server as Server).keepAliveTimeout = 120_000
  })
}

/** CPU time (user + system) a process has used so far, in µs (Linux: /proc/<pid>/stat). */
export function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime (fields 14 and 15 of stat(5)), in clock ticks of 1/100 s.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
}

/** Resident memory of a process in MiB (Linux: /proc/<pid>/status). */
export function processRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024
}
