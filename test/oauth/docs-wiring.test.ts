import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')

/** The "Mounting it" block of docs/oauth.md: an app's whole sign-in + OAuth wiring. */
function mountingSnippet(): string {
  const doc = readFileSync(join(repo, 'docs/oauth.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Mounting it'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error('docs/oauth.md has no ts block under "Mounting it"')
  return block
}

// What the surrounding text of docs/oauth.md has in scope: the app's database, shared store,
// config and logger.
const IN_SCOPE = `import type { Redis } from 'ioredis'
import type { KeyValueStore, Logger } from 'kilnjs/core'
import type { PostgresDatabase } from 'kilnjs/db'
declare const database: PostgresDatabase
declare const logger: Logger
declare const shared: { kv: KeyValueStore; client: Redis }
declare const config: { trustProxy: boolean; appUrl: string }
declare const oauthConfig: { secret: string; issuer: string }
const db = database.db
`

const USER_TABLE = `import { pgTable, serial, text } from 'drizzle-orm/pg-core'
export const users = pgTable('users', {
  id: serial('id').primaryKey(),
  email: text('email').notNull().unique(),
  passwordHash: text('password_hash'),
})
`

describe('docs/oauth.md: the sign-in wiring for an app with its own user table', () => {
  it('is under 30 lines', () => {
    const lines = mountingSnippet()
      .split('\n')
      .filter((line) => line.trim() !== '')
    expect(lines.length).toBeLessThan(30)
  })

  it('type-checks (strict) against kiln as written', async () => {
    const dir = join(repo, 'tmp', `oauth-docs-${process.pid}`)
    mkdirSync(dir, { recursive: true })
    try {
      const snippet = mountingSnippet().split('\n')
      const imports = snippet.filter((line) => line.startsWith('import '))
      const body = snippet.filter((line) => !line.startsWith('import '))
      writeFileSync(join(dir, 'schema.ts'), USER_TABLE)
      writeFileSync(join(dir, 'main.ts'), [...imports, IN_SCOPE, ...body].join('\n'))
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ extends: '../../tsconfig.json', include: ['./*.ts'], exclude: [] }),
      )
      const result = await run('npx', ['tsc', '--noEmit', '-p', join(dir, 'tsconfig.json')], {
        cwd: repo,
      }).catch((error: { stdout: string }) => error)
      expect(String(result.stdout)).toBe('')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
