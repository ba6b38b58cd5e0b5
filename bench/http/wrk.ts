/**
 * Drives one burst of HTTP load with wrk (https://github.com/wg/wrk), a C load generator in its
 * own process, so the client's CPU never counts as the server's. Requests are written to a file
 * ready-made and replayed by `requests.lua`; wrk reports its count, latency percentiles and
 * errors as one JSON line.
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** One request, as the benchmark means it; `Host` and `Content-Length` are added. */
export interface HttpRequest {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string | Buffer
}

export interface LoadOptions {
  /** Open connections, each with one request in flight (wrk `-c`). */
  connections: number
  seconds: number
  /** wrk threads (`-t`); one is plenty against one server on a small machine. */
  threads?: number
  /**
   * A pause before each request on each connection, ms (wrk's `delay()`): the load offered is
   * then about `connections / (pause + latency)` requests per second, not as many as the server
   * can answer. Default 0 (a closed loop at full speed).
   */
  pauseMs?: number
}

export interface LoadResult {
  requests: number
  seconds: number
  rps: number
  p50Ms: number
  p99Ms: number
  meanMs: number
  /** Answers with a status of 400 or more. */
  errorStatuses: number
  /** Connect, read, write errors and timeouts. */
  socketErrors: number
  /** How many times a thread ran out of requests and started over. */
  wrapped: number
}

const script = fileURLToPath(new URL('./requests.lua', import.meta.url))
let checked = false

/** Throws with the way to install wrk when it is missing. */
export function assertWrk(): void {
  if (checked) return
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' })
  } catch (error) {
    // `wrk -v` prints its usage and exits 1: only a missing binary is a failure.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'The HTTP benchmarks need wrk, a load generator that runs in its own process. Install it ' +
          'with `apt-get install -y wrk` (Debian/Ubuntu), `brew install wrk` (macOS) or from ' +
          'https://github.com/wg/wrk, then run the benchmark again.',
      )
    }
  }
  checked = true
}

/** Serialises requests in the format requests.lua reads. */
export function encodeRequests(origin: string, requests: HttpRequest[]): Buffer {
  const host = new URL(origin).host
  const parts: Buffer[] = []
  for (const request of requests) {
    const body =
      request.body === undefined
        ? undefined
        : Buffer.isBuffer(request.body)
          ? request.body
          : Buffer.from(request.body)
    let head = `${request.method ?? 'GET'} ${request.path} HTTP/1.1\r\nHost: ${host}\r\n`
    for (const [name, value] of Object.entries(request.headers ?? {}))
      head += `${name}: ${value}\r\n`
    if (body) head += `Content-Length: ${body.length}\r\n`
    const raw = Buffer.concat([Buffer.from(`${head}\r\n`), body ?? Buffer.alloc(0)])
    parts.push(Buffer.from(`${raw.length}\n`), raw)
  }
  return Buffer.concat(parts)
}

/** Parses the line requests.lua prints in done(). */
export function parseWrkOutput(stdout: string): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith('KILN_WRK '))
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`)
  const r = JSON.parse(line.slice('KILN_WRK '.length)) as Record<string, number>
  const n = (key: string) => r[key] ?? 0
  const seconds = n('duration_us') / 1e6
  return {
    requests: n('requests'),
    seconds,
    rps: n('requests') / seconds,
    p50Ms: n('p50_us') / 1000,
    p99Ms: n('p99_us') / 1000,
    meanMs: n('mean_us') / 1000,
    errorStatuses: n('status'),
    socketErrors: n('connect') + n('read') + n('write') + n('timeout'),
    wrapped: n('wrapped'),
  }
}

/** Runs wrk against `origin` with `requests` (replayed in order, round-robin over threads). */
export async function runWrk(
  origin: string,
  requests: HttpRequest[],
  options: LoadOptions,
): Promise<LoadResult> {
  assertWrk()
  if (requests.length === 0) throw new TypeError('runWrk needs at least one request')
  const threads = options.threads ?? 1
  const dir = await mkdtemp(join(tmpdir(), 'kiln-wrk-'))
  try {
    const file = join(dir, 'requests')
    await writeFile(file, encodeRequests(origin, requests))
    const args = [
      `-t${threads}`,
      `-c${Math.max(options.connections, threads)}`,
      `-d${options.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      script,
      origin,
    ]
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        'wrk',
        args,
        {
          env: {
            ...process.env,
            KILN_WRK_REQUESTS: file,
            KILN_WRK_THREADS: String(threads),
            KILN_WRK_PAUSE_MS: String(Math.round(options.pauseMs ?? 0)),
          },
          maxBuffer: 16 * 2 ** 20,
        },
        (error, out, err) =>
          error ? reject(new Error(`wrk failed: ${err || error}`)) : resolve(out),
      )
    })
    return parseWrkOutput(stdout)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
