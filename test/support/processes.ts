import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const tsx = join(repoRoot, 'node_modules/.bin/tsx')

export interface RunningProcess {
  child: ChildProcess
  /** Everything written to stdout and stderr so far. */
  output(): string
  exited: Promise<number | null>
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<number | null>
}

export interface SpawnOptions {
  env?: Record<string, string>
  cwd?: string
}

/**
 * Runs a TypeScript entry point of this repository through tsx with the repository's tsconfig
 * (its `kilnjs/*` paths), as `npm start` runs the demo; without `npm start`'s young-generation
 * flag, which changes its speed, not its behaviour.
 */
export function spawnTs(
  entry: string,
  args: string[] = [],
  options: SpawnOptions = {},
): RunningProcess {
  return track(
    spawn(tsx, ['--tsconfig', join(repoRoot, 'tsconfig.json'), join(repoRoot, entry), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
}

/** Runs `kiln <args>` from this checkout. */
export function spawnKiln(args: string[], options: SpawnOptions = {}): RunningProcess {
  return track(
    spawn(process.execPath, [join(repoRoot, 'bin/kiln.js'), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
}

/** Collects the output of a child process and stops it on demand. */
export function track(child: ChildProcess): RunningProcess {
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    output: () => output,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      const code = await exited
      clearTimeout(timer)
      return code
    },
  }
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Starts the demo as a process on a free port and waits until /health answers. */
export async function startDemoProcess(
  env: Record<string, string>,
  options: { cwd?: string; port?: number } = {},
): Promise<RunningProcess & { url: string; port: number }> {
  const port = options.port ?? (await freePort())
  const url = `http://127.0.0.1:${port}`
  const running = spawnTs('examples/demo/src/main.ts', [], {
    cwd: options.cwd,
    env: { PORT: String(port), APP_URL: env.APP_URL ?? url, ...env },
  })
  await waitFor(async () => {
    if (running.child.exitCode !== null) throw new Error(`demo exited early:\n${running.output()}`)
    try {
      return (await fetch(`${url}/health`)).ok
    } catch {
      return false
    }
  }, `the demo on port ${port}`)
  return Object.assign(running, { url, port })
}
