import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  ApiKeyRejectedError,
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
  generateApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../src/api/index.ts'
import { insertKeyRow } from '../../src/api/provider/key-store.ts'
import { DependencyError, ManualClock } from '../../src/core/index.ts'
import { createDatabase, type Database } from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { captureLog, execSql, keyWithPrefix, migratedDatabase } from './support.ts'

async function rejection(promise: Promise<unknown>): Promise<ApiKeyRejectedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ApiKeyRejectedError)
  return error as ApiKeyRejectedError
}

describeEachDatabase('createDatabaseApiKeyProvider', (backend) => {
  let test: TestDatabase
  let database: Database
  let clock: ManualClock
  let provider: DatabaseApiKeyProvider
  const log = captureLog()

  // One database per backend (PGlite takes seconds to start); each test starts from no keys.
  beforeAll(async () => {
    test = await migratedDatabase(backend)
    database = test.database
  })
  afterAll(() => test.cleanup())
  beforeEach(async () => {
    await execSql(database, 'DELETE FROM api_keys')
    clock = new ManualClock(Date.UTC(2026, 0, 1))
    // The cache is on by default except on PGlite; these tests exercise it everywhere.
    provider = createDatabaseApiKeyProvider({
      database,
      clock,
      logger: log.logger,
      cacheTtlMs: 10_000,
    })
    await vi.waitFor(() => expect(provider.status().changeFeed).toBe('live'))
  })
  afterEach(async () => {
    await provider.close()
    expect(log.text()).not.toMatch(/kl_(live|test)_[0-9A-Za-z]{43}/)
  })

  it('verifies a key and returns { id, name, scopes }', async () => {
    const created = await createApiKey(database, { name: 'ci', scopes: ['posts:read', 'admin'] })
    const info = await provider.verifyKey(created.rawKey)
    expect(info).toEqual({ id: created.record.id, name: 'ci', scopes: ['posts:read', 'admin'] })
  })

  it('gives a key without scopes an empty list', async () => {
    const created = await createApiKey(database, { name: 'plain' })
    expect(created.record.scopes).toBeNull()
    expect((await provider.verifyKey(created.rawKey)).scopes).toEqual([])
  })

  it('refuses a malformed key before touching the database', async () => {
    // A database that cannot answer: any query would fail with a DependencyError.
    const unreachable = await createDatabase('postgres://kiln@127.0.0.1:1/none')
    const closed = createDatabaseApiKeyProvider({ database: unreachable, cacheTtlMs: 0 })
    expect((await rejection(closed.verifyKey('kl_live_short'))).reason).toBe('malformed')
    expect((await rejection(closed.verifyKey(`${generateApiKey().rawKey}x`))).reason).toBe(
      'malformed',
    )
    await closed.close()
    await unreachable.close()
  })

  it('refuses a well-formed key nobody issued', async () => {
    await createApiKey(database, { name: 'other' })
    expect((await rejection(provider.verifyKey(generateApiKey().rawKey))).reason).toBe('unknown')
  })

  it('refuses a revoked key before comparing hashes', async () => {
    const key = generateApiKey()
    // The stored hash is not even a hash: only the revocation can have refused it.
    await insertKeyRow(database, {
      name: 'revoked',
      prefix: key.prefix,
      hashedKey: 'not-a-hash',
      scopes: null,
      expiresAt: null,
      createdAt: new Date(clock.now()),
    })
    await execSql(database, `UPDATE api_keys SET revoked_at = created_at`)
    expect((await rejection(provider.verifyKey(key.rawKey))).reason).toBe('revoked')
  })

  it('refuses an expired key, and a cached key the moment it expires', async () => {
    const expiresAt = new Date(clock.now() + 60_000)
    const created = await createApiKey(database, { name: 'soon', expiresAt })
    expect((await provider.verifyKey(created.rawKey)).name).toBe('soon')
    clock.advance(60_000)
    expect((await rejection(provider.verifyKey(created.rawKey))).reason).toBe('expired')
  })

  it('refuses the right prefix with a wrong secret', async () => {
    const created = await createApiKey(database, { name: 'victim' })
    const forged = keyWithPrefix(created.prefix)
    const error = await rejection(provider.verifyKey(forged.rawKey))
    expect(error.reason).toBe('mismatch')
    expect(error.keyId).toBe(created.record.id)
  })

  it('checks every row when two keys share a prefix', async () => {
    const first = await createApiKey(database, { name: 'first', scopes: ['a'] })
    const second = keyWithPrefix(first.prefix)
    const row = await insertKeyRow(database, {
      name: 'second',
      prefix: first.prefix,
      hashedKey: second.hashedKey,
      scopes: '["b"]',
      expiresAt: null,
      createdAt: new Date(clock.now()),
    })
    expect(await provider.verifyKey(first.rawKey)).toEqual({
      id: first.record.id,
      name: 'first',
      scopes: ['a'],
    })
    expect(await provider.verifyKey(second.rawKey)).toEqual({
      id: row.id,
      name: 'second',
      scopes: ['b'],
    })
    expect((await rejection(provider.verifyKey(keyWithPrefix(first.prefix).rawKey))).reason).toBe(
      'mismatch',
    )
    // Revoking one leaves the other usable.
    await revokeApiKey(database, first.record.id, { clock })
    expect((await rejection(provider.verifyKey(first.rawKey))).reason).toBe('mismatch')
    expect((await provider.verifyKey(second.rawKey)).name).toBe('second')
  })

  for (const [label, value] of [
    ['invalid JSON', '[admin'],
    ['a JSON object', '{"admin":true}'],
    ['a list holding a number', '["a",1]'],
    ['a JSON string', '"admin"'],
  ] as const) {
    it(`refuses a key whose scopes column holds ${label}, and logs why`, async () => {
      const created = await createApiKey(database, { name: 'broken' })
      await execSql(
        database,
        `UPDATE api_keys SET scopes = '${value.replaceAll("'", "''")}' WHERE id = ${created.record.id}`,
      )
      const error = await rejection(provider.verifyKey(created.rawKey))
      expect(error.reason).toBe('invalid_scopes')
      expect(error.status).toBe(401)
      const entry = log.entries().find((e) => e.keyId === created.record.id && e.level === 50)
      expect(entry?.msg).toContain('not a JSON array of strings')
    })
  }

  it('answers a DependencyError when the database is down', async () => {
    const down = await migratedDatabase(backend)
    const created = await createApiKey(down.database, { name: 'ci' })
    await down.database.close()
    const closed = createDatabaseApiKeyProvider({ database: down.database })
    const error = await closed.verifyKey(created.rawKey).catch((caught: unknown) => caught)
    await closed.close()
    await down.cleanup().catch(() => {})
    expect(error).toBeInstanceOf(DependencyError)
    expect((error as DependencyError).status).toBe(500)
    expect((error as Error).message).toBe('Internal Server Error')
  })

  it('writes last_used_at after verification, at most once a minute per key', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    const lastUsed = async () =>
      (await listApiKeys(database)).find((k) => k.id === created.record.id)?.lastUsedAt ?? null
    await provider.verifyKey(created.rawKey)
    // Nothing is written on the request path.
    expect(await lastUsed()).toBeNull()
    await provider.flush()
    const first = clock.now()
    expect((await lastUsed())?.getTime()).toBe(first)
    clock.advance(30_000)
    await provider.verifyKey(created.rawKey)
    await provider.flush()
    expect((await lastUsed())?.getTime()).toBe(first)
    clock.advance(30_000)
    await provider.verifyKey(created.rawKey)
    await provider.flush()
    expect((await lastUsed())?.getTime()).toBe(first + 60_000)
  })

  it('writes last_used_at on its own timer, off the request path', async () => {
    const quick = createDatabaseApiKeyProvider({ database, clock, lastUsedFlushDelayMs: 5 })
    const created = await createApiKey(database, { name: 'ci' })
    await quick.verifyKey(created.rawKey)
    await vi.waitFor(async () => {
      const row = (await listApiKeys(database)).find((k) => k.id === created.record.id)
      expect(row?.lastUsedAt?.getTime()).toBe(clock.now())
    })
    await quick.close()
  })

  it('never writes last_used_at for a refused key', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await rejection(provider.verifyKey(keyWithPrefix(created.prefix).rawKey))
    await execSql(database, `UPDATE api_keys SET revoked_at = created_at`)
    await rejection(provider.verifyKey(created.rawKey))
    await provider.flush()
    expect(
      (await listApiKeys(database)).find((k) => k.id === created.record.id)?.lastUsedAt,
    ).toBeNull()
  })

  it('refuses a key revoked with revokeApiKey on the next request, though it was cached', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await provider.verifyKey(created.rawKey)
    expect(provider.status().cacheEntries).toBe(1)
    const result = await revokeApiKey(database, created.prefix, { clock })
    expect(result.changed).toBe(true)
    expect(result.record.revokedAt?.getTime()).toBe(clock.now())
    expect((await rejection(provider.verifyKey(created.rawKey))).reason).toBe('revoked')
  })

  it('bounds changes no feed can see by the cache TTL', async () => {
    const created = await createApiKey(database, { name: 'before' })
    await provider.verifyKey(created.rawKey)
    expect(provider.status().cacheEntries).toBe(1)
    // A change made with triggers disabled (Postgres) or on the app's own connection (SQLite).
    const rename = `UPDATE api_keys SET name = 'after' WHERE id = ${created.record.id}`
    if (database.dialect === 'postgres') {
      await execSql(
        database,
        `BEGIN; SET LOCAL session_replication_role = replica; ${rename}; COMMIT`,
      )
    } else {
      await execSql(database, rename)
    }
    expect((await provider.verifyKey(created.rawKey)).name).toBe('before')
    clock.advance(10_000)
    expect((await provider.verifyKey(created.rawKey)).name).toBe('after')
  })

  it('does not cache at all with cacheTtlMs: 0', async () => {
    const uncached = createDatabaseApiKeyProvider({ database, clock, cacheTtlMs: 0 })
    const created = await createApiKey(database, { name: 'before' })
    await uncached.verifyKey(created.rawKey)
    await execSql(database, `UPDATE api_keys SET name = 'after'`)
    expect((await uncached.verifyKey(created.rawKey)).name).toBe('after')
    expect(uncached.status()).toEqual({ cacheEntries: 0, changeFeed: 'off' })
    await uncached.close()
  })

  it('verifies many concurrent requests for one key with one lookup and the same answer', async () => {
    const created = await createApiKey(database, { name: 'ci', scopes: ['*'] })
    const infos = await Promise.all(
      Array.from({ length: 20 }, () => provider.verifyKey(created.rawKey)),
    )
    expect(new Set(infos).size).toBe(1)
    expect(Object.isFrozen(infos[0])).toBe(true)
  })

  it('rejects bad configuration when created', () => {
    expect(() => createDatabaseApiKeyProvider({ database: undefined as never })).toThrow(TypeError)
    expect(() => createDatabaseApiKeyProvider({ database, cacheTtlMs: -1 })).toThrow(TypeError)
  })
})

describeEachDatabase(
  'changes made by hand in SQL reach the cache',
  (backend) => {
    let test: TestDatabase
    let provider: DatabaseApiKeyProvider
    beforeAll(async () => {
      test = await migratedDatabase(backend)
    })
    afterAll(() => test.cleanup())
    beforeEach(async () => {
      await execSql(test.database, 'DELETE FROM api_keys')
      provider = createDatabaseApiKeyProvider({ database: test.database, cacheTtlMs: 10_000 })
      await vi.waitFor(() => expect(provider.status().changeFeed).toBe('live'))
    })
    afterEach(() => provider.close())

    it('hears UPDATE, DELETE and TRUNCATE through the table triggers', async () => {
      const a = await createApiKey(test.database, { name: 'a' })
      const b = await createApiKey(test.database, { name: 'b' })
      await provider.verifyKey(a.rawKey)
      await provider.verifyKey(b.rawKey)
      expect(provider.status().cacheEntries).toBe(2)
      await execSql(
        test.database,
        `UPDATE api_keys SET revoked_at = now() WHERE id = ${a.record.id}`,
      )
      await vi.waitFor(() => expect(provider.status().cacheEntries).toBe(1))
      expect((await rejection(provider.verifyKey(a.rawKey))).reason).toBe('revoked')
      await execSql(test.database, `DELETE FROM api_keys WHERE id = ${b.record.id}`)
      await vi.waitFor(() => expect(provider.status().cacheEntries).toBe(0))
      expect((await rejection(provider.verifyKey(b.rawKey))).reason).toBe('unknown')
      const c = await createApiKey(test.database, { name: 'c' })
      await provider.verifyKey(c.rawKey)
      await execSql(test.database, 'TRUNCATE api_keys')
      await vi.waitFor(() => expect(provider.status().cacheEntries).toBe(0))
    })

    it('does not drop the cache when only last_used_at changes', async () => {
      const a = await createApiKey(test.database, { name: 'a' })
      await provider.verifyKey(a.rawKey)
      await provider.flush()
      await execSql(test.database, 'UPDATE api_keys SET last_used_at = now()')
      // A later notification proves the earlier UPDATE sent none.
      const b = await createApiKey(test.database, { name: 'b' })
      await provider.verifyKey(b.rawKey)
      await execSql(test.database, `UPDATE api_keys SET name = 'b2' WHERE id = ${b.record.id}`)
      await vi.waitFor(() => expect(provider.status().cacheEntries).toBe(1))
      expect((await provider.verifyKey(a.rawKey)).name).toBe('a')
    })
  },
  { only: ['pglite', 'postgres'] },
)

describeEachDatabase(
  'several instances on one Postgres server',
  (backend) => {
    let test: TestDatabase
    let other: Database
    let here: DatabaseApiKeyProvider
    let there: DatabaseApiKeyProvider
    beforeEach(async () => {
      test = await migratedDatabase(backend)
      other = await createDatabase(test.url!, {
        poolMax: 2,
        directUrl: test.directUrl,
        logger: { info: () => {} },
      })
      here = createDatabaseApiKeyProvider({ database: test.database })
      there = createDatabaseApiKeyProvider({ database: other })
      await vi.waitFor(() => expect(there.status().changeFeed).toBe('live'))
    })
    afterEach(async () => {
      await here.close()
      await there.close()
      await other.close()
      await test.cleanup()
    })

    it('refuses a key revoked on one instance on the others once the notification lands', async () => {
      const created = await createApiKey(test.database, { name: 'ci' })
      await here.verifyKey(created.rawKey)
      await there.verifyKey(created.rawKey)
      expect(there.status().cacheEntries).toBe(1)
      await revokeApiKey(test.database, created.record.id)
      // The revoking instance: at once.
      expect((await rejection(here.verifyKey(created.rawKey))).reason).toBe('revoked')
      // The other: as soon as its LISTEN connection hears the trigger.
      await vi.waitFor(() => expect(there.status().cacheEntries).toBe(0))
      expect((await rejection(there.verifyKey(created.rawKey))).reason).toBe('revoked')
    })

    it('stops trusting its cache when its LISTEN connection dies, and listens again', async () => {
      const created = await createApiKey(test.database, { name: 'before' })
      await there.verifyKey(created.rawKey)
      expect(there.status().cacheEntries).toBe(1)
      await execSql(
        test.database,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'kiln api_keys listener'`,
      )
      await vi.waitFor(() => expect(there.status().cacheEntries).toBe(0))
      // A change nobody is told about (triggers off) is still seen: nothing stale was kept.
      await execSql(
        test.database,
        `BEGIN; SET LOCAL session_replication_role = replica; UPDATE api_keys SET name = 'after'; COMMIT`,
      )
      expect((await there.verifyKey(created.rawKey)).name).toBe('after')
      await vi.waitFor(() => expect(there.status().changeFeed).toBe('live'), { timeout: 10_000 })
    })
  },
  { only: ['postgres'] },
)

describe('a Postgres server that refuses connections', () => {
  it('makes verification a DependencyError (500), never a 401', async () => {
    const unreachable = await createDatabase('postgres://kiln@127.0.0.1:1/none')
    const provider = createDatabaseApiKeyProvider({ database: unreachable })
    const error = await provider
      .verifyKey(generateApiKey().rawKey)
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(DependencyError)
    expect(provider.status().changeFeed).toBe('down')
    await provider.close()
    await unreachable.close()
  })
})

describe('SQLite in a file shared by two processes', () => {
  it('refuses a key revoked through another connection on the very next request', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'kiln-keys-'))
    const url = `sqlite:${join(dir, 'app.db')}`
    const app = await createDatabase(url)
    const { migrate } = await import('../../src/db/index.ts')
    await migrate(app, { logger: { info: () => {}, warn: () => {} } })
    const cli = await createDatabase(url)
    const provider = createDatabaseApiKeyProvider({ database: app })
    try {
      const created = await createApiKey(app, { name: 'ci' })
      await provider.verifyKey(created.rawKey)
      expect(provider.status().cacheEntries).toBe(1)
      await revokeApiKey(cli, created.prefix)
      expect((await rejection(provider.verifyKey(created.rawKey))).reason).toBe('revoked')
    } finally {
      await provider.close()
      await cli.close()
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describeEachDatabase(
  'an api_keys table without the change triggers',
  (backend) => {
    it('is never cached from (changes could go unheard), and says why', async () => {
      const test = await backend.create()
      const log = captureLog()
      try {
        const { readFileSync } = await import('node:fs')
        const table = readFileSync(
          new URL('../../migrations/postgres/0001_api_keys.sql', import.meta.url),
          'utf8',
        )
        await execSql(test.database, table.replaceAll('--> statement-breakpoint', ''))
        const provider = createDatabaseApiKeyProvider({
          database: test.database,
          logger: log.logger,
          cacheTtlMs: 10_000,
        })
        await vi.waitFor(() => expect(log.text()).toContain('change triggers are missing'), {
          timeout: 10_000,
        })
        const created = await createApiKey(test.database, { name: 'before' })
        await provider.verifyKey(created.rawKey)
        expect(provider.status()).toEqual({ cacheEntries: 0, changeFeed: 'down' })
        await execSql(test.database, `UPDATE api_keys SET revoked_at = now()`)
        expect((await rejection(provider.verifyKey(created.rawKey))).reason).toBe('revoked')
        await provider.close()
      } finally {
        await test.cleanup()
      }
    })
  },
  { only: ['pglite', 'postgres'] },
)

describe('PGlite shared on a socket, as the demo shares it with the CLI', () => {
  it('verifies every request by default, so a revocation over the socket applies at once', async () => {
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
    const app = await createDatabase('pglite:')
    const { migrate } = await import('../../src/db/index.ts')
    await migrate(app, { logger: { info: () => {}, warn: () => {} } })
    if (app.dialect !== 'postgres' || !app.pglite) throw new Error('expected PGlite')
    const server = new PGLiteSocketServer({ db: app.pglite, host: '127.0.0.1', port: 0 })
    await server.start()
    const provider = createDatabaseApiKeyProvider({ database: app })
    const cli = await createDatabase(`postgres://postgres@${server.getServerConn()}/postgres`, {
      poolMax: 1,
    })
    try {
      expect(provider.status().changeFeed).toBe('off')
      const created = await createApiKey(app, { name: 'ci' })
      await provider.verifyKey(created.rawKey)
      await provider.verifyKey(created.rawKey)
      await revokeApiKey(cli, created.prefix)
      expect((await rejection(provider.verifyKey(created.rawKey))).reason).toBe('revoked')
    } finally {
      await cli.close()
      await provider.close()
      await server.stop()
      await app.close()
    }
  })
})
