import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/core/index.ts'
import type { Database } from '../../src/db/index.ts'
import { createDatabaseClientStore } from '../../src/oauth/store/client-store.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { createHarness, type Harness, migrated } from './support.ts'

function register(harness: Harness, body: unknown, headers: Record<string, string> = {}) {
  return harness.request('/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function expectError(res: Response, error: string) {
  expect(res.status).toBe(400)
  expect(((await res.json()) as { error: string }).error).toBe(error)
}

describeEachDatabase('POST /register', (backend) => {
  it('registers a client in oauth_clients and answers 201 with its metadata', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const harness = createHarness({ database, clock: new ManualClock(Date.UTC(2026, 0, 2)) })
      const res = await register(harness, {
        client_name: 'Cursor',
        redirect_uris: [
          'cursor://anysphere.cursor-retrieval/oauth/callback',
          'http://127.0.0.1/cb',
        ],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        software_id: 'cursor',
        logo_uri: 'https://cursor.example/logo.png',
      })
      expect(res.status).toBe(201)
      expect(res.headers.get('cache-control')).toBe('no-store')
      const body = (await res.json()) as Record<string, unknown>
      expect(body).toMatchObject({
        client_name: 'Cursor',
        redirect_uris: [
          'cursor://anysphere.cursor-retrieval/oauth/callback',
          'http://127.0.0.1/cb',
        ],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        software_id: 'cursor',
        client_id_issued_at: Date.UTC(2026, 0, 2) / 1000,
      })
      expect(body.client_secret).toBeUndefined()
      const stored = await createDatabaseClientStore(database).get(String(body.client_id))
      expect(stored).toMatchObject({
        clientName: 'Cursor',
        applicationType: 'native',
        redirectUris: ['cursor://anysphere.cursor-retrieval/oauth/callback', 'http://127.0.0.1/cb'],
        issuedAt: Date.UTC(2026, 0, 2) / 1000,
      })
    } finally {
      await cleanup()
    }
  })

  it('changes nothing when the request is refused', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const harness = createHarness({ database })
      await expectError(
        await register(harness, { redirect_uris: ['javascript:alert(1)'] }),
        'invalid_redirect_uri',
      )
      expect(await countClients(database)).toBe(0)
    } finally {
      await cleanup()
    }
  })

  it('a flood of valid registrations from 26 addresses refuses no new client (issue #39)', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const harness = createHarness({ database, trustProxy: true })
      const from = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i}` })
      const valid = { redirect_uris: ['https://a.example/cb'] }
      // Each address up to its own limit (20 an hour): 520 valid registrations.
      for (let address = 0; address < 26; address++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => register(harness, valid, from(address))),
        )
        expect(answers.map((res) => res.status)).toEqual(Array(20).fill(201))
      }
      // The per-address limit stays.
      expect((await register(harness, valid, from(0))).status).toBe(429)
      // Anyone else still registers.
      const next = await register(harness, valid, from(200))
      expect(next.status).toBe(201)
    } finally {
      await cleanup()
    }
  })

  it('stores at most maxUnusedClients unused clients: the oldest unused go first, used ones stay', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const clock = new ManualClock(Date.UTC(2026, 0, 2))
      const harness = createHarness({ database, clock, maxUnusedClients: 3, trustProxy: true })
      const from = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i}` })
      const valid = { redirect_uris: ['https://a.example/cb'] }
      const ids: string[] = []
      for (let i = 0; i < 6; i++) {
        clock.advance(1_000)
        const res = await register(harness, valid, from(i))
        expect(res.status).toBe(201)
        ids.push(((await res.json()) as { client_id: string }).client_id)
        // The first client got a token: it is no longer an unused one.
        if (i === 0)
          await createDatabaseClientStore(database).markUsed?.(
            ids[0] as string,
            new Date(clock.now()),
          )
      }
      const store = createDatabaseClientStore(database)
      const kept = await Promise.all(ids.map(async (id) => (await store.get(id)) !== undefined))
      expect(kept).toEqual([true, false, false, true, true, true])
      expect(await countClients(database)).toBe(4)
    } finally {
      await cleanup()
    }
  })
})

async function countClients(database: Database): Promise<number> {
  const { sql } = await import('drizzle-orm')
  const count =
    database.dialect === 'sqlite'
      ? database.db.all<{ n: number }>(sql`select count(*) as n from oauth_clients`)[0]?.n
      : (
          (await database.db.execute(sql`select count(*) as n from oauth_clients`)) as {
            rows: { n: string }[]
          }
        ).rows[0]?.n
  return Number(count)
}

describe('POST /register: rules', () => {
  it('registers client_secret_post clients as public clients, told "none"', async () => {
    const harness = createHarness()
    for (const method of ['client_secret_post', 'client_secret_basic']) {
      const res = await register(harness, {
        redirect_uris: ['https://app.example/cb'],
        token_endpoint_auth_method: method,
      })
      expect(res.status).toBe(201)
      const body = (await res.json()) as Record<string, unknown>
      expect(body.token_endpoint_auth_method).toBe('none')
      expect(body.client_secret).toBeUndefined()
    }
  })

  it('accepts application_type web and native, refuses others', async () => {
    const harness = createHarness()
    for (const type of ['web', 'native']) {
      expect(
        (
          await register(harness, {
            redirect_uris: ['https://a.example/cb'],
            application_type: type,
          })
        ).status,
      ).toBe(201)
    }
    await expectError(
      await register(harness, {
        redirect_uris: ['https://a.example/cb'],
        application_type: 'desktop',
      }),
      'invalid_client_metadata',
    )
  })

  it('rejects dangerous schemes in any case and with whitespace tricks', async () => {
    const harness = createHarness()
    for (const uri of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      '\u0000javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'DATA:text/html,x',
      'vbscript:msgbox(1)',
      'VBScript:msgbox(1)',
      'file:///etc/passwd',
      'FILE:///etc/passwd',
      'javascript://%0aalert(1)',
      'blob:https://example.com/x',
      'BLOB:https://example.com/x',
      'filesystem:https://example.com/temporary/x',
      'about:blank',
    ]) {
      await expectError(await register(harness, { redirect_uris: [uri] }), 'invalid_redirect_uri')
    }
  })

  it('rejects relative URIs, fragments and non-loopback http', async () => {
    const harness = createHarness()
    for (const uri of [
      '/callback',
      'callback',
      'https://app.example/cb#frag',
      'https://app.example/cb#',
      'http://app.example/cb',
      'http://localhost@evil.example/cb',
      '',
    ]) {
      await expectError(await register(harness, { redirect_uris: [uri] }), 'invalid_redirect_uri')
    }
    await expectError(await register(harness, {}), 'invalid_redirect_uri')
    await expectError(await register(harness, { redirect_uris: [] }), 'invalid_redirect_uri')
    await expectError(
      await register(harness, { redirect_uris: 'https://a.example/cb' }),
      'invalid_redirect_uri',
    )
  })

  it('allows custom schemes and loopback http', async () => {
    const harness = createHarness()
    const res = await register(harness, {
      redirect_uris: [
        'cursor://anysphere.cursor-retrieval/oauth/user-kiln/callback',
        'vscode://vscode.github-authentication/did-authenticate',
        'com.example.app:/oauth2redirect',
        'http://localhost:6274/oauth/callback',
        'http://127.0.0.1:33418/',
        'http://[::1]/cb',
        'https://vscode.dev/redirect',
      ],
    })
    expect(res.status).toBe(201)
  })

  it('refuses bad metadata with invalid_client_metadata', async () => {
    const harness = createHarness()
    const uris = { redirect_uris: ['https://a.example/cb'] }
    await expectError(await register(harness, '{not json'), 'invalid_client_metadata')
    await expectError(await register(harness, '[1,2]'), 'invalid_client_metadata')
    await expectError(
      await register(harness, { ...uris, grant_types: ['password'] }),
      'invalid_client_metadata',
    )
    await expectError(
      await register(harness, { ...uris, grant_types: ['implicit'] }),
      'invalid_client_metadata',
    )
    await expectError(
      await register(harness, { ...uris, response_types: ['token'] }),
      'invalid_client_metadata',
    )
    await expectError(
      await register(harness, { ...uris, token_endpoint_auth_method: 'private_key_jwt' }),
      'invalid_client_metadata',
    )
    await expectError(
      await register(harness, { ...uris, client_name: 42 }),
      'invalid_client_metadata',
    )
    const form = await harness.request('/register', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'redirect_uris=https://a.example/cb',
    })
    await expectError(form, 'invalid_client_metadata')
  })

  it('registers a device-only client without redirect URIs', async () => {
    const harness = createHarness()
    const res = await register(harness, {
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
    })
    expect(res.status).toBe(201)
    expect(((await res.json()) as { redirect_uris: string[] }).redirect_uris).toEqual([])
  })

  it('is rate limited per IP with 429 and Retry-After', async () => {
    const harness = createHarness({
      registrationLimit: { max: 2, windowMs: 60_000 },
      trustProxy: true,
    })
    const body = { redirect_uris: ['https://a.example/cb'] }
    const ip = { 'x-forwarded-for': '203.0.113.7' }
    expect((await register(harness, body, ip)).status).toBe(201)
    expect((await register(harness, body, ip)).status).toBe(201)
    const limited = await register(harness, body, ip)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('60')
    expect((await register(harness, body, { 'x-forwarded-for': '203.0.113.8' })).status).toBe(201)
  })

  it('takes its limits as { points, durationSeconds }, as the rate limiters do', async () => {
    const harness = createHarness({
      registrationLimit: { points: 1, durationSeconds: 120 },
      trustProxy: true,
    })
    const body = { redirect_uris: ['https://a.example/cb'] }
    const ip = { 'x-forwarded-for': '203.0.113.10' }
    expect((await register(harness, body, ip)).status).toBe(201)
    const limited = await register(harness, body, ip)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('120')
  })

  it('refuses a limit that cannot work when the server is built', () => {
    expect(() => createHarness({ registrationLimit: { points: 0, durationSeconds: 60 } })).toThrow(
      TypeError,
    )
  })

  it('counts malformed requests against the per-address limit', async () => {
    const harness = createHarness({
      registrationLimit: { max: 2, windowMs: 60_000 },
      trustProxy: true,
    })
    const ip = { 'x-forwarded-for': '203.0.113.9' }
    expect((await register(harness, 'not json', ip)).status).toBe(400)
    expect((await register(harness, { redirect_uris: ['javascript:x'] }, ip)).status).toBe(400)
    const limited = await register(harness, { redirect_uris: ['https://a.example/cb'] }, ip)
    expect(limited.status).toBe(429)
  })

  it('counts the hop the proxy appended, not a forged left-most X-Forwarded-For', async () => {
    const harness = createHarness({
      registrationLimit: { max: 2, windowMs: 60_000 },
      trustProxy: true,
    })
    const body = { redirect_uris: ['https://a.example/cb'] }
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const forged = { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` }
      statuses.push((await register(harness, body, forged)).status)
    }
    expect(statuses).toEqual([201, 201, 429, 429])
  })
})
