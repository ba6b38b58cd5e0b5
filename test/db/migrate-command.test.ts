import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const fixture = join(root, 'test/fixtures/sqlite-app')

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `node bin/kiln.js <args>` as a user would, without colours. */
function kiln(args: string[], options: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(root, 'bin/kiln.js'), ...args],
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...options.env },
        timeout: 110_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        done({ code, stdout, stderr })
      },
    )
  })
}

// Each run starts node + tsx and compiles the CLI: seconds on a busy machine.
const timeout = 120_000

describe('kilnjs migrate', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-migrate-cli-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it(
    'prints one clear line and exits 1 on a bad DATABASE_URL',
    async () => {
      const run = await kiln(['migrate'], {
        cwd: root,
        env: { DATABASE_URL: 'mysql://root@localhost/app' },
      })
      expect(run.code).toBe(1)
      expect(run.stdout).toBe('')
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        'DATABASE_URL is not a database URL: expected postgres://user:password@host:5432/database, sqlite:<path> or file:<path> (sqlite::memory: in memory), or pglite:<dir> (pglite: in memory)',
      ])
    },
    timeout,
  )

  it(
    "applies the SQLite fixture's migrations, then has nothing to migrate",
    async () => {
      const env = { DATABASE_URL: `sqlite:${join(dir, 'app.db')}` }
      const first = await kiln(['migrate'], { cwd: fixture, env })
      expect(first.stderr).toBe('')
      expect(first.code).toBe(0)
      const lines = first.stdout.trimEnd().split('\n')
      expect(lines[0]).toBe(`Migrating DATABASE_URL (sqlite:${join(dir, 'app.db')})`)
      expect(lines).toContain('✓ kiln/0001_api_keys.sql')
      expect(lines).toContain('✓ app/0001_init.sql')
      const second = await kiln(['migrate'], { cwd: fixture, env })
      expect(second.code).toBe(0)
      expect(second.stdout.trimEnd().split('\n').at(-1)).toBe('Nothing to migrate')
    },
    timeout,
  )

  it(
    'migrates DATABASE_DIRECT_URL when set (the server behind a pooler), not DATABASE_URL',
    async () => {
      const env = {
        DATABASE_URL: `sqlite:${join(dir, 'pooled.db')}`,
        DATABASE_DIRECT_URL: `sqlite:${join(dir, 'direct.db')}`,
      }
      const run = await kiln(['migrate'], { cwd: fixture, env })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const lines = run.stdout.trimEnd().split('\n')
      expect(lines[0]).toBe(`Migrating DATABASE_DIRECT_URL (sqlite:${join(dir, 'direct.db')})`)
      expect(lines).toContain('✓ app/0001_init.sql')
      expect(existsSync(join(dir, 'direct.db'))).toBe(true)
      expect(existsSync(join(dir, 'pooled.db'))).toBe(false)
    },
    timeout,
  )

  it(
    'says when there is no kiln.config.ts',
    async () => {
      const run = await kiln(['migrate'], { cwd: dir, env: {} })
      expect(run.code).toBe(1)
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        `No kiln.config.ts in ${dir}: run kiln from your app's root, or set kiln up there with npx kilnjs init`,
      ])
    },
    timeout,
  )
})
