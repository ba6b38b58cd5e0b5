import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnTs, waitFor } from '../support/processes.ts'

describe('npm start (the demo process)', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  it('starts on embedded PGlite, shares it for the CLI, prints what to open, and exits 0 on SIGTERM', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'kiln-demo-'))
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
    const port = String(20000 + Math.floor(Math.random() * 20000))
    const started = spawnTs('examples/demo/src/main.ts', [], { cwd, env: { PORT: port } })
    cleanups.push(() => started.child.kill('SIGKILL'))
    await waitFor(() => started.output().includes('is running at'), 'the banner', 150_000)
    expect(started.output()).toContain(`http://localhost:${port}/api/docs`)
    expect(started.output()).toContain('demo@example.com')

    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)

    // The embedded database is reachable by a second process through the recorded socket.
    const record = JSON.parse(readFileSync(join(cwd, 'storage/kiln-db.json'), 'utf8')) as {
      url: string
      pid: number
    }
    // The recording process is the demo itself (tsx runs it as a child of the spawned wrapper).
    expect(() => process.kill(record.pid, 0)).not.toThrow()
    const client = new pg.Client({ connectionString: record.url })
    await client.connect()
    const { rows } = await client.query('select email from users')
    await client.end()
    expect(rows).toEqual([{ email: 'demo@example.com' }])

    started.child.kill('SIGTERM')
    expect(await started.exited).toBe(0)
    expect(existsSync(join(cwd, 'storage/kiln-db.json'))).toBe(false)
  }, 180_000)

  it.each([
    ['DATABASE_URL', 'mysql://localhost/app', /DATABASE_URL: expected a postgres:\/\//],
    ['REDIS_URL', 'redis://127.0.0.1:6390', /Redis at 127\.0\.0\.1:6390 is unreachable/],
    ['PORT', 'eighty', /PORT: expected a port number/],
    ['MSG_APP_SECRET', 'only-one-of-the-four-messaging-variables', /MSG_ACCESS_TOKEN/],
  ])(
    'a bad %s gives one clear line and exit code 1',
    async (name, value, message) => {
      const cwd = mkdtempSync(join(tmpdir(), 'kiln-demo-'))
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
      const started = spawnTs('examples/demo/src/main.ts', [], {
        cwd,
        env: { [name]: value, DATABASE_URL: name === 'DATABASE_URL' ? value : 'pglite:' },
      })
      cleanups.push(() => started.child.kill('SIGKILL'))
      expect(await started.exited).toBe(1)
      const out = started.output().trim()
      expect(out).toMatch(message)
      expect(out).not.toMatch(/\n\s+at /)
      // Starting embedded Postgres and migrating comes first; on a busy machine that takes a while.
    },
    120_000,
  )
})
