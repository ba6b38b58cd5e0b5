import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsx = join(root, 'node_modules/.bin/tsx')
const main = join(root, 'examples/demo/src/main.ts')

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

/** Runs the demo's entry point as `npm start` does, from a scratch directory. */
function startProcess(env: Record<string, string>, cwd: string): Started {
  let output = ''
  const child = spawn(tsx, ['--tsconfig', join(root, 'tsconfig.json'), main], {
    cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

async function waitFor(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('npm start (the demo process)', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  it('starts on embedded PGlite, shares it for the CLI, prints what to open, and exits 0 on SIGTERM', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'kiln-demo-'))
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
    const port = String(20000 + Math.floor(Math.random() * 20000))
    const started = startProcess({ PORT: port }, cwd)
    cleanups.push(() => started.child.kill('SIGKILL'))
    await waitFor(() => started.output().includes('is running at'), 'the banner')
    expect(started.output()).toContain(`http://localhost:${port}/api/docs`)
    expect(started.output()).toContain('demo@example.com')

    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)

    // The embedded database is reachable by a second process through the recorded socket.
    const record = JSON.parse(readFileSync(join(cwd, 'storage/kiln-db.json'), 'utf8')) as {
      url: string
      pid: number
    }
    expect(record.pid).toBe(started.child.pid)
    const client = new pg.Client({ connectionString: record.url })
    await client.connect()
    const { rows } = await client.query('select email from users')
    await client.end()
    expect(rows).toEqual([{ email: 'demo@example.com' }])

    started.child.kill('SIGTERM')
    expect(await started.exited).toBe(0)
    expect(existsSync(join(cwd, 'storage/kiln-db.json'))).toBe(false)
  })

  it.each([
    ['DATABASE_URL', 'mysql://localhost/app', /DATABASE_URL: expected a postgres:\/\//],
    ['REDIS_URL', 'redis://127.0.0.1:6390', /Redis at 127\.0\.0\.1:6390 is unreachable/],
    ['PORT', 'eighty', /PORT: expected a port number/],
  ])('a bad %s gives one clear line and exit code 1', async (name, value, message) => {
    const cwd = mkdtempSync(join(tmpdir(), 'kiln-demo-'))
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
    const started = startProcess(
      { [name]: value, DATABASE_URL: name === 'DATABASE_URL' ? value : 'pglite:' },
      cwd,
    )
    cleanups.push(() => started.child.kill('SIGKILL'))
    expect(await started.exited).toBe(1)
    const out = started.output().trim()
    expect(out).toMatch(message)
    expect(out).not.toMatch(/\n\s+at /)
  })
})
