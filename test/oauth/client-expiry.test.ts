import { expect, it } from 'vitest'
import { ManualClock } from '../../src/core/index.ts'
import { createDatabaseClientStore } from '../../src/oauth/store/client-store.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { codeGrant, createHarness, form, migrated, registerClient } from './support.ts'

const DAY = 24 * 3600_000

describeEachDatabase('unused registered clients expire', (backend) => {
  it('removes clients that never got a token after 30 days, keeps used ones', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const clock = new ManualClock(Date.UTC(2026, 0, 2))
      const harness = createHarness({ database, clock })
      const store = createDatabaseClientStore(database)
      const unused = await registerClient(harness)
      const used = await codeGrant(harness)
      clock.advance(29 * DAY)
      // 29 days on: a registration sweeps, but nothing is old enough yet.
      await registerClient(harness)
      expect(await store.get(unused.client_id)).toBeDefined()
      clock.advance(2 * DAY)
      const late = await registerClient(harness)
      expect(await store.get(unused.client_id)).toBeUndefined()
      // Used once, kept; the client registered at day 29 is not 30 days old yet.
      const kept = await store.get(used.clientId)
      expect(kept?.lastUsedAt).toBe(Date.UTC(2026, 0, 2))
      expect(await store.get(late.client_id)).toBeDefined()
      // A token for an expired client is refused like any unknown client.
      const res = await harness.request(
        '/token',
        form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: unused.client_id }),
      )
      expect(res.status).toBe(401)
    } finally {
      await cleanup()
    }
  })

  it('writes last_used_at at most once a day per client', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const clock = new ManualClock(Date.UTC(2026, 0, 2))
      const harness = createHarness({ database, clock })
      const store = createDatabaseClientStore(database)
      const { clientId, tokens } = await codeGrant(harness)
      const refresh = (token: unknown) =>
        harness.request(
          '/token',
          form({ grant_type: 'refresh_token', refresh_token: String(token), client_id: clientId }),
        )
      clock.advance(3600_000)
      const second = await refresh(tokens.refresh_token)
      expect(second.status).toBe(200)
      expect((await store.get(clientId))?.lastUsedAt).toBe(Date.UTC(2026, 0, 2))
      clock.advance(DAY)
      const third = await refresh(((await second.json()) as Record<string, unknown>).refresh_token)
      expect(third.status).toBe(200)
      expect((await store.get(clientId))?.lastUsedAt).toBe(Date.UTC(2026, 0, 2) + DAY + 3600_000)
    } finally {
      await cleanup()
    }
  })

  it('keeps every client with unusedClientTtlMs: false', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await migrated(database)
      const clock = new ManualClock(Date.UTC(2026, 0, 2))
      const harness = createHarness({ database, clock, unusedClientTtlMs: false })
      const first = await registerClient(harness)
      clock.advance(365 * DAY)
      await registerClient(harness)
      expect(await createDatabaseClientStore(database).get(first.client_id)).toBeDefined()
    } finally {
      await cleanup()
    }
  })
})
