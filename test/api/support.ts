import { Writable } from 'node:stream'
import { sql } from 'drizzle-orm'
import { pino } from 'pino'
import { generateApiKey, hashApiKey } from '../../src/api/index.ts'
import { type Logger, silentLogger } from '../../src/core/logger.ts'
import { type Database, sqliteClient } from '../../src/db/database.ts'
import { migrate } from '../../src/db/index.ts'
import type { DatabaseBackend, TestDatabase } from '../support/databases.ts'

/** A fresh database of the backend with kiln's migrations applied. */
export async function migratedDatabase(backend: DatabaseBackend): Promise<TestDatabase> {
  const test = await backend.create()
  await migrate(test.database, { logger: { info: () => {}, warn: () => {} } })
  return test
}

export interface CapturedLog {
  logger: Logger
  /** Everything written so far, one JSON line per entry. */
  text(): string
  entries(): Record<string, unknown>[]
}

/**
 * A logger writing to memory, with no redaction at all: a test asserting that a raw key never
 * appears proves the code never logged it, rather than that the redactor scrubbed it.
 */
export function captureLog(): CapturedLog {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk))
      callback()
    },
  })
  const logger = pino({ level: 'trace' }, stream) as unknown as Logger
  return {
    logger,
    text: () => chunks.join(''),
    entries: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

export { silentLogger }

/** Runs SQL typed "by hand", outside kiln's functions. */
export async function execSql(database: Database, text: string): Promise<void> {
  if (database.dialect === 'sqlite') {
    sqliteClient(database)!.exec(text)
    return
  }
  if (database.pglite) {
    await database.pglite.exec(text)
    return
  }
  // Without parameters pg uses the simple protocol: several statements may run at once.
  await database.db.execute(sql.raw(text))
}

/** A key that shares `prefix` with another, with its own 35 random characters. */
export function keyWithPrefix(prefix: string): { rawKey: string; hashedKey: string } {
  const other = generateApiKey(prefix.startsWith('kl_test_') ? 'test' : 'live')
  const rawKey = `${prefix}${other.rawKey.slice(16)}`
  return { rawKey, hashedKey: hashApiKey(rawKey) }
}
