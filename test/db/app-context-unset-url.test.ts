import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { openAppDatabase } from '../../src/cli/app-context.ts'
import { MissingPackageError } from '../../src/core/optional-package.ts'

// An app without @electric-sql/pglite: opening the embedded database fails as it would there.
vi.mock('../../src/db/index.ts', async (original) => ({
  ...(await original<typeof import('../../src/db/index.ts')>()),
  createDatabase: async () => {
    throw new MissingPackageError('@electric-sql/pglite', 'Embedded Postgres')
  },
}))

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-app-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

it('says DATABASE_URL is unset in a Postgres app, not only that PGlite is missing', async () => {
  await writeFile(
    join(dir, 'kiln.config.ts'),
    `export default ${JSON.stringify({ dialect: 'postgres', schema: './schema.ts', out: './api' })}\n`,
  )
  const error = await openAppDatabase({ cwd: dir, env: {} }).catch((e: unknown) => e)
  expect((error as Error).message).toBe(
    `DATABASE_URL is not set: export DATABASE_URL=postgres://user:password@127.0.0.1:5432/app (without it kiln opens embedded Postgres in ${join(dir, 'storage', 'pgdata')}, which needs npm install @electric-sql/pglite)`,
  )
})

it('names the missing driver of a URL that is set', async () => {
  await writeFile(
    join(dir, 'kiln.config.ts'),
    `export default ${JSON.stringify({ dialect: 'postgres', schema: './schema.ts', out: './api' })}\n`,
  )
  const error = await openAppDatabase({
    cwd: dir,
    env: { DATABASE_URL: 'pglite:storage/other' },
  }).catch((e: unknown) => e)
  expect((error as Error).message).toMatch(/^Could not open .*npm install @electric-sql\/pglite/)
})
