import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisKeyValueStore } from '../../src/core/index.ts'
import { createDatabase, type Database } from '../../src/db/index.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl, redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'
import {
  approve,
  CHALLENGE,
  createHarness,
  form,
  formWithCookie,
  type Harness,
  hiddenField,
  migrated,
  registerClient,
  TestSessions,
  VERIFIER,
} from './support.ts'

describe.skipIf(postgresUrl === undefined || redisUrl === undefined)(
  'two instances sharing Redis and Postgres',
  () => {
    let redis: TestRedis
    let databases: Database[] = []
    let drop: () => Promise<void>
    let a: Harness
    let b: Harness

    beforeAll(async () => {
      redis = await createTestRedis()
      const pg = await createPostgresTestDatabase()
      drop = pg.drop
      databases = [
        await createDatabase(pg.url, { poolMax: 3 }),
        await createDatabase(pg.url, { poolMax: 3 }),
      ]
      await migrated(databases[0]!)
      // One session store stands for the application's shared (Redis) sessions.
      const sessions = new TestSessions()
      const instance = (database: Database) =>
        createHarness({
          database,
          store: new RedisKeyValueStore(redis.connections.connect(), {
            prefix: `${redis.prefix}:`,
          }),
          clock: null,
          sessions,
        })
      a = instance(databases[0]!)
      b = instance(databases[1]!)
    })

    afterAll(async () => {
      for (const database of databases) await database.close()
      await drop?.()
      await redis?.cleanup()
    })

    it('device flow begun on one, approved on the other, token polled on the first', async () => {
      const client = await registerClient(a)
      const started = (await (
        await a.request('/device_authorization', form({ client_id: client.client_id }))
      ).json()) as { device_code: string; user_code: string }
      const cookie = b.sessions.login('bob')
      const entry = await b.request('/device', { headers: { cookie } })
      const csrf = hiddenField(await entry.text(), 'csrf_token')
      const confirm = await b.request(
        '/device',
        formWithCookie(cookie, {
          user_code: started.user_code.toLowerCase().replace('-', ''),
          csrf_token: csrf,
        }),
      )
      expect(confirm.status).toBe(200)
      const decided = await b.request(
        '/device',
        formWithCookie(cookie, {
          user_code: started.user_code,
          csrf_token: csrf,
          decision: 'approve',
        }),
      )
      expect(decided.status).toBe(200)
      const res = await a.request(
        '/token',
        form({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: started.device_code,
          client_id: client.client_id,
        }),
      )
      expect(res.status).toBe(200)
      const { access_token } = (await res.json()) as { access_token: string }
      expect(decodeJwt(access_token)).toMatchObject({ sub: 'bob', tenant_id: 'tenant-b' })
      // Either instance accepts the token.
      const onB = await b.request('/mcp', {
        method: 'POST',
        headers: { authorization: `Bearer ${access_token}` },
      })
      expect(onB.status).toBe(200)
    })

    it('a code issued by one is exchanged on the other, and a replay there revokes on both', async () => {
      const client = await registerClient(b)
      const cookie = a.sessions.login('alice')
      const location = await approve(a, cookie, {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: 'http://127.0.0.1:9999/callback',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
        state: 'x',
      })
      const fields = {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        code_verifier: VERIFIER,
        redirect_uri: 'http://127.0.0.1:9999/callback',
        client_id: client.client_id,
      }
      const res = await b.request('/token', form(fields))
      expect(res.status).toBe(200)
      const { access_token } = (await res.json()) as { access_token: string }
      const auth = { method: 'POST', headers: { authorization: `Bearer ${access_token}` } }
      expect((await a.request('/mcp', auth)).status).toBe(200)
      expect((await a.request('/token', form(fields))).status).toBe(400)
      expect((await a.request('/mcp', auth)).status).toBe(401)
      expect((await b.request('/mcp', auth)).status).toBe(401)
    })
  },
)
