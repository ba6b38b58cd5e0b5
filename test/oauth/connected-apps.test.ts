import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type AuditEntry,
  type AuditLog,
  createAuditLog,
  createDatabase,
  type Database,
} from '../../src/db/index.ts'
import { insufficientScopeChallenge } from '../../src/oauth/index.ts'
import { execSql } from '../api/support.ts'
import { codeGrant, createHarness, formWithCookie, hiddenField, migrated } from './support.ts'

function mcp(harness: ReturnType<typeof createHarness>, token: unknown) {
  return harness.request('/mcp', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
}

describe('GET /connected-apps', () => {
  it('sends unauthenticated people to login and back', async () => {
    const harness = createHarness()
    const res = await harness.request('/connected-apps')
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Fconnected-apps')
  })

  it("lists the person's own applications with their permissions in plain words", async () => {
    const harness = createHarness()
    const { cookie } = await codeGrant(harness, 'alice')
    await codeGrant(harness, 'bob')
    const res = await harness.request('/connected-apps', { headers: { cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    expect(html.match(/<h2>/g)).toHaveLength(1)
    expect(html).toContain('Test Client')
    expect(html).toContain('Read your data through the assistant tools')
    expect(html).toContain('Revoke Test Client')
  })

  it('shows an empty list', async () => {
    const harness = createHarness()
    const cookie = harness.sessions.login('carol')
    const html = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(html).toContain('No applications are connected')
  })
})

describe('GET /connected-apps with the audit trail', () => {
  let database: Database
  let log: AuditLog
  beforeAll(async () => {
    database = await migrated(await createDatabase('sqlite::memory:'))
    log = createAuditLog(database)
  })
  afterAll(() => database.close())
  beforeEach(() => execSql(database, 'DELETE FROM kiln_mcp_audit'))

  const at = Date.UTC(2026, 0, 1, 9)
  function entry(clientId: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
    return {
      at: new Date(at),
      userId: 'alice',
      tenantId: 'tenant-a',
      clientId,
      tool: 'crud_update',
      model: 'posts',
      recordIds: [5],
      fields: ['title'],
      outcome: 'ok',
      durationMs: 2,
      message: null,
      values: null,
      ...overrides,
    }
  }

  it('shows what each application did for this person, newest first, and its last use', async () => {
    const harness = createHarness({ activity: log })
    const { cookie, clientId } = await codeGrant(harness, 'alice')
    await log.insert([
      entry(clientId, {
        at: new Date(at + 60_000),
        tool: 'crud_delete',
        outcome: 'refused',
        message: 'Not <b>allowed</b>',
      }),
      entry(clientId, {
        at: new Date(at + 2 * 86_400_000),
        tool: 'crud_list',
        recordIds: [1, 2, 3, 4, 5, 6, 7],
        fields: [],
      }),
      // Another person's calls through the same client, and another client's, stay out.
      entry(clientId, { userId: 'bob', model: 'secrets_of_bob' }),
      entry('other-client', { model: 'elsewhere' }),
    ])
    const html = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(html).toContain('aria-label="Activity of Test Client"')
    const rows = [
      ...html.matchAll(
        /<tr data-outcome="([a-z_]+)"><td class="when">([^<]+)<\/td><td>([^<]+)<\/td>/g,
      ),
    ]
    expect(rows.map((row) => [row[1], row[2], row[3]])).toEqual([
      ['ok', '2026-01-03 09:00', 'listed posts #1, #2, #3, #4, #5 and 2 more'],
      ['refused', '2026-01-01 09:01', 'deleted posts #5 (title)'],
    ])
    expect(html).toContain('Not &lt;b&gt;allowed&lt;/b&gt;')
    expect(html).not.toContain('secrets_of_bob')
    expect(html).not.toContain('elsewhere')
    expect(html).toContain('last used 2026-01-03 09:00 UTC')
  })

  it('says how each call that needed approval was allowed or ended', async () => {
    const harness = createHarness({ activity: log })
    const { cookie, clientId } = await codeGrant(harness, 'alice')
    const steps = [
      ['awaiting_approval', "Waiting for the user's approval"],
      ['approved', 'Approved on the approval page by user alice at 2026-01-01T09:00:00.000Z'],
      ['ok', null],
      ['client_confirmed', 'Confirmed by the client'],
      ['denied', 'The user declined'],
      ['expired', 'The approval expired'],
      ['cancelled', 'The call was cancelled'],
    ] as const
    await log.insert(
      steps.map(([outcome, message], i) =>
        entry(clientId, { at: new Date(at + i * 1000), tool: 'crud_delete', outcome, message }),
      ),
    )
    const html = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    const shown = [
      ...html.matchAll(/<tr data-outcome="([a-z_]+)">(?:<td[^>]*>[^<]*<\/td>){2}<td>([^<]+)/g),
    ].map((row) => [row[1], row[2]])
    expect(shown.reverse()).toEqual([
      ['awaiting_approval', 'awaiting approval'],
      ['approved', 'approved by you'],
      ['ok', 'done'],
      ['client_confirmed', 'confirmed in the assistant'],
      ['denied', 'denied by you'],
      ['expired', 'expired unanswered'],
      ['cancelled', 'cancelled'],
    ])
    expect(html).toContain('Approved on the approval page by user alice at')
  })

  it('pages one application’s activity, and refuses a bad page with 400', async () => {
    const harness = createHarness({ activity: log })
    const { cookie, clientId } = await codeGrant(harness, 'alice')
    await log.insert(
      Array.from({ length: 23 }, (_, i) =>
        entry(clientId, { at: new Date(at + i * 1000), recordIds: [i] }),
      ),
    )
    const ids = (html: string) =>
      [...html.matchAll(/updated posts #(\d+)/g)].map((match) => Number(match[1]))
    const first = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(ids(first)).toEqual([22, 21, 20, 19, 18, 17, 16, 15, 14, 13])
    const older = /<a rel="next" href="([^"]+)">Older activity<\/a>/
      .exec(first)![1]!
      .replace(/&amp;/g, '&')
    expect(older).toBe(`/connected-apps?${new URLSearchParams({ app: clientId, page: '2' })}`)
    const third = await (
      await harness.request(
        `/connected-apps?${new URLSearchParams({ app: clientId, page: '3' })}`,
        {
          headers: { cookie },
        },
      )
    ).text()
    expect(ids(third)).toEqual([2, 1, 0])
    expect(third).toContain('Newer activity')
    expect(third).not.toContain('Older activity')
    for (const query of ['page=0', 'page=x', `app=${clientId}&page=1001`, 'page=2', 'app=']) {
      const res = await harness.request(`/connected-apps?${query}`, { headers: { cookie } })
      expect(res.status, query).toBe(400)
    }
  })

  it('says when an application did nothing yet', async () => {
    const harness = createHarness({ activity: log })
    const { cookie } = await codeGrant(harness, 'alice')
    const html = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(html).toContain('Nothing yet.')
  })
})

describe('POST /connected-apps', () => {
  it('revokes one application: its tokens stop working', async () => {
    const harness = createHarness()
    const { cookie, clientId, tokens } = await codeGrant(harness, 'alice')
    const page = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    const res = await harness.request(
      '/connected-apps',
      formWithCookie(cookie, { csrf_token: hiddenField(page, 'csrf_token'), client_id: clientId }),
    )
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/connected-apps?disconnected=1')
    expect((await mcp(harness, tokens.access_token)).status).toBe(401)
    const after = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(after).toContain('No applications are connected')
  })

  it("needs the session's CSRF token and cannot reach another person's grants", async () => {
    const harness = createHarness()
    const alice = await codeGrant(harness, 'alice')
    const bobCookie = harness.sessions.login('bob')
    // Bob has nothing listed, so his CSRF token comes from another of his forms.
    const bobPage = await (
      await harness.request('/device', { headers: { cookie: bobCookie } })
    ).text()
    const forged = await harness.request(
      '/connected-apps',
      formWithCookie(alice.cookie, { csrf_token: 'wrong', client_id: alice.clientId }),
    )
    expect(forged.status).toBe(403)
    const bobs = await harness.request(
      '/connected-apps',
      formWithCookie(bobCookie, {
        csrf_token: hiddenField(bobPage, 'csrf_token'),
        client_id: alice.clientId,
      }),
    )
    expect(bobs.status).toBe(303)
    expect((await mcp(harness, alice.tokens.access_token)).status).toBe(200)
  })
})

describe('insufficientScopeChallenge', () => {
  it('builds the step-up challenge with the needed scope', () => {
    expect(
      insufficientScopeChallenge({
        resourceMetadataUrl: 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp',
        scopes: ['mcp:write'],
      }),
    ).toBe(
      'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="This operation needs the scope: mcp:write", scope="mcp:write"',
    )
  })
})
