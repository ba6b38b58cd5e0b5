import { Hono } from 'hono'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bearerCredential } from '../../src/api/auth/api-key-auth.ts'
import {
  type ApiEnv,
  apiKeyAuth,
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
  generateApiKey,
  getApiKey,
  listApiKeys,
  requireScopes,
  revokeApiKey,
} from '../../src/api/index.ts'
import { insertKeyRow } from '../../src/api/provider/key-store.ts'
import { errorHandler, ManualClock } from '../../src/core/index.ts'
import type { Database } from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import {
  type CapturedLog,
  captureLog,
  execSql,
  keyWithPrefix,
  migratedDatabase,
} from './support.ts'

const RAW_KEY = /kl_(live|test)_[0-9A-Za-z]{43}/

function buildApp(provider: DatabaseApiKeyProvider, log: CapturedLog) {
  const app = new Hono<ApiEnv>()
  app.onError(errorHandler({ logger: log.logger }))
  app.use('/api/*', apiKeyAuth({ provider, logger: log.logger }))
  app.get('/api/records/1', (c) => c.json({ data: { id: 1 }, key: getApiKey(c) }))
  app.get('/api/admin', apiKeyAuth({ provider, scopes: ['admin'], logger: log.logger }), (c) =>
    c.json({ ok: true }),
  )
  app.delete('/api/users/1', (c) => {
    requireScopes(c, 'users:delete')
    return c.json({ message: 'Deleted' })
  })
  app.get('/unprotected', (c) => c.json({ key: getApiKey(c) }))
  return app
}

describeEachDatabase('apiKeyAuth', (backend) => {
  let test: TestDatabase
  let database: Database
  let provider: DatabaseApiKeyProvider
  let log: CapturedLog
  let app: ReturnType<typeof buildApp>
  const clock = new ManualClock(Date.UTC(2026, 0, 1))

  beforeAll(async () => {
    test = await migratedDatabase(backend)
    database = test.database
  })
  afterAll(() => test.cleanup())
  beforeEach(async () => {
    await execSql(database, 'DELETE FROM api_keys')
    log = captureLog()
    provider = createDatabaseApiKeyProvider({ database, clock, logger: log.logger })
    app = buildApp(provider, log)
  })
  afterEach(async () => {
    await provider.close()
    // Whatever happened, no raw key was ever logged (the logger here does not redact).
    expect(log.text()).not.toMatch(RAW_KEY)
  })

  const get = (path: string, authorization?: string) =>
    app.request(path, {
      headers: authorization === undefined ? {} : { Authorization: authorization },
    })

  async function expectRefused(response: Response, reason: string) {
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ error: 'Unauthenticated', code: 'unauthenticated' })
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer')
    const entry = log.entries().find((e) => e.msg === 'API key refused')
    expect(entry?.reason).toBe(reason)
    // Nothing was recorded for a refused key.
    await provider.flush()
    for (const key of await listApiKeys(database)) expect(key.lastUsedAt).toBeNull()
  }

  it('lets a valid key through and hands ApiKeyInfo to the handler', async () => {
    const created = await createApiKey(database, { name: 'ci', scopes: ['posts:read'] })
    const response = await get('/api/records/1', `Bearer ${created.rawKey}`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      data: { id: 1 },
      key: { id: created.record.id, name: 'ci', scopes: ['posts:read'] },
    })
  })

  it('accepts the scheme in any case', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    expect((await get('/api/records/1', `bearer ${created.rawKey}`)).status).toBe(200)
    expect((await get('/api/records/1', `BEARER ${created.rawKey}`)).status).toBe(200)
  })

  it('401: no Authorization header', async () => {
    await expectRefused(await get('/api/records/1'), 'missing')
  })

  it('401: Basic scheme', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    const basic = `Basic ${Buffer.from(`user:${created.rawKey}`).toString('base64')}`
    await expectRefused(await get('/api/records/1', basic), 'malformed')
  })

  it('401: the key without a scheme', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await expectRefused(await get('/api/records/1', created.rawKey), 'malformed')
  })

  it('401: empty bearer', async () => {
    await expectRefused(await get('/api/records/1', 'Bearer '), 'malformed')
  })

  it('401: the word Bearer alone', async () => {
    await expectRefused(await get('/api/records/1', 'Bearer'), 'malformed')
  })

  it('401: two credentials', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await expectRefused(
      await get('/api/records/1', `Bearer ${created.rawKey} ${created.rawKey}`),
      'malformed',
    )
  })

  it('401: wrong length', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await expectRefused(
      await get('/api/records/1', `Bearer ${created.rawKey.slice(0, 50)}`),
      'malformed',
    )
    await expectRefused(await get('/api/records/1', `Bearer ${created.rawKey}A`), 'malformed')
  })

  it('401: wrong characters', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    const bad = `${created.rawKey.slice(0, 40)}-._~+/=${created.rawKey.slice(47)}`
    expect(bad).toHaveLength(51)
    await expectRefused(await get('/api/records/1', `Bearer ${bad}`), 'malformed')
  })

  it('401: right format but unknown', async () => {
    await createApiKey(database, { name: 'ci' })
    await expectRefused(await get('/api/records/1', `Bearer ${generateApiKey().rawKey}`), 'unknown')
  })

  it('401: revoked', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    expect((await get('/api/records/1', `Bearer ${created.rawKey}`)).status).toBe(200)
    await provider.flush()
    await execSql(database, 'UPDATE api_keys SET last_used_at = NULL')
    await revokeApiKey(database, created.record.id, { clock })
    await expectRefused(await get('/api/records/1', `Bearer ${created.rawKey}`), 'revoked')
  })

  it('401: expired', async () => {
    const created = await createApiKey(database, {
      name: 'ci',
      expiresAt: new Date(clock.now() - 1),
    })
    await expectRefused(await get('/api/records/1', `Bearer ${created.rawKey}`), 'expired')
  })

  it('401: right prefix, wrong secret', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    const forged = keyWithPrefix(created.prefix)
    await expectRefused(await get('/api/records/1', `Bearer ${forged.rawKey}`), 'mismatch')
  })

  it('two keys sharing a prefix each authenticate as themselves', async () => {
    const first = await createApiKey(database, { name: 'first' })
    const second = keyWithPrefix(first.prefix)
    const row = await insertKeyRow(database, {
      name: 'second',
      prefix: first.prefix,
      hashedKey: second.hashedKey,
      scopes: null,
      expiresAt: null,
      createdAt: new Date(clock.now()),
    })
    const a = await get('/api/records/1', `Bearer ${first.rawKey}`)
    const b = await get('/api/records/1', `Bearer ${second.rawKey}`)
    expect(((await a.json()) as { key: { id: number } }).key.id).toBe(first.record.id)
    expect(((await b.json()) as { key: { id: number } }).key.id).toBe(row.id)
    await provider.flush()
    await execSql(database, 'UPDATE api_keys SET last_used_at = NULL')
    await expectRefused(
      await get('/api/records/1', `Bearer ${keyWithPrefix(first.prefix).rawKey}`),
      'mismatch',
    )
  })

  it('401: scopes column holding invalid JSON (and the problem is logged)', async () => {
    const created = await createApiKey(database, { name: 'ci' })
    await execSql(
      database,
      `UPDATE api_keys SET scopes = '["admin"' WHERE id = ${created.record.id}`,
    )
    await expectRefused(await get('/api/records/1', `Bearer ${created.rawKey}`), 'invalid_scopes')
    expect(log.entries().some((e) => e.level === 50 && e.keyId === created.record.id)).toBe(true)
  })

  it('500: database down, logged without the key', async () => {
    const down = await migratedDatabase(backend)
    const created = await createApiKey(down.database, { name: 'ci' })
    const downProvider = createDatabaseApiKeyProvider({
      database: down.database,
      logger: log.logger,
    })
    const downApp = buildApp(downProvider, log)
    await down.database.close()
    const response = await downApp.request('/api/records/1', {
      headers: { Authorization: `Bearer ${created.rawKey}` },
    })
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({
      error: 'Internal Server Error',
      code: 'dependency_failed',
    })
    const entry = log.entries().find((e) => e.level === 50)
    expect(entry?.code).toBe('dependency_failed')
    expect(log.text()).not.toContain('"stack":"DependencyError')
    await downProvider.close()
    await down.cleanup().catch(() => {})
  })

  it('403 { error } when the key lacks a scope the group requires', async () => {
    const created = await createApiKey(database, { name: 'ci', scopes: ['posts:read'] })
    const response = await get('/api/admin', `Bearer ${created.rawKey}`)
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({
      error: 'This API key lacks the scope admin',
      code: 'forbidden',
    })
  })

  it('lets a key with the scope, or with *, into a scoped group', async () => {
    const admin = await createApiKey(database, { name: 'admin', scopes: ['admin'] })
    const all = await createApiKey(database, { name: 'all', scopes: ['*'] })
    expect((await get('/api/admin', `Bearer ${admin.rawKey}`)).status).toBe(200)
    expect((await get('/api/admin', `Bearer ${all.rawKey}`)).status).toBe(200)
  })

  it('requireScopes: 403 without the finer scope, 200 with it or *', async () => {
    const reader = await createApiKey(database, { name: 'r', scopes: ['users:read'] })
    const deleter = await createApiKey(database, { name: 'd', scopes: ['users:delete'] })
    const all = await createApiKey(database, { name: 'all', scopes: ['*'] })
    const del = (key: string) =>
      app.request('/api/users/1', { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } })
    const refused = await del(reader.rawKey)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({
      error: 'This API key lacks the scope users:delete',
      code: 'forbidden',
    })
    expect((await del(deleter.rawKey)).status).toBe(200)
    expect(await (await del(all.rawKey)).json()).toEqual({ message: 'Deleted' })
  })

  it('401 when a handler asks for ApiKeyInfo on a route without apiKeyAuth', async () => {
    const response = await get('/unprotected')
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ error: 'Unauthenticated', code: 'unauthenticated' })
  })
})

describe('apiKeyAuth configuration', () => {
  it('fails at start-up without a provider or with a bad scope', () => {
    expect(() => apiKeyAuth({ provider: undefined as never })).toThrow(TypeError)
    const provider = { verifyKey: async () => ({ id: 1, name: 'x', scopes: [] }) }
    expect(() => apiKeyAuth({ provider, scopes: ['has space'] })).toThrow(TypeError)
  })

  it('works with any ApiKeyProvider', async () => {
    const app = new Hono<ApiEnv>()
    app.onError(errorHandler({ logger: captureLog().logger }))
    const provider = {
      async verifyKey(raw: string) {
        if (raw !== 'static-token-1')
          throw new (await import('../../src/core/index.ts')).UnauthenticatedError()
        return { id: 7, name: 'static', scopes: ['a'] }
      },
    }
    app.get('/x', apiKeyAuth({ provider, scopes: ['a'] }), (c) => c.json(getApiKey(c)))
    const ok = await app.request('/x', { headers: { Authorization: 'Bearer static-token-1' } })
    expect(await ok.json()).toEqual({ id: 7, name: 'static', scopes: ['a'] })
    const bad = await app.request('/x', { headers: { Authorization: 'Bearer nope' } })
    expect(bad.status).toBe(401)
  })
})

describe('bearerCredential', () => {
  it('extracts the credential and refuses every other shape', () => {
    expect(bearerCredential('Bearer abc')).toBe('abc')
    expect(bearerCredential('Bearer  abc ')).toBe('abc')
    for (const header of [
      undefined,
      '',
      '   ',
      'Bearer',
      'Bearer ',
      'Basic abc',
      'Token abc',
      'Bearer a b',
      'Bearerabc',
    ]) {
      expect(() => bearerCredential(header)).toThrow('Unauthenticated')
    }
  })
})
