import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../../src/db/index.ts'
import type { DataTools } from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import type { McpTestApp } from '../support/http-app.ts'
import { createTickets, type TicketsInstance, ticketsInstance, UPDATED, URI } from './support.ts'

describeEachDatabase('MCP resource subscriptions', (backend) => {
  let test: TestDatabase
  let database: Database
  let instance: TicketsInstance
  let app: McpTestApp
  let watch: DataTools['watch']

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    instance = await ticketsInstance(database, await createTickets(database))
    ;({ app, watch } = instance)
  })

  afterAll(async () => {
    await instance?.close()
    await test?.cleanup()
  })

  const token = (...args: Parameters<TicketsInstance['token']>) => instance.token(...args)
  const post = (tenant: string, title: string) => instance.post(tenant, title)

  /** A v2 SDK client with the token, in the era `version` asks for. */
  async function connect(bearer: string, version: 'modern' | 'legacy') {
    const client = new ClientV2(
      { name: 'kiln-subscriber', version: '1' },
      version === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    )
    const updates: string[] = []
    let heard: () => void = () => {}
    client.setNotificationHandler(UPDATED, (notification) => {
      updates.push(notification.params.uri)
      heard()
    })
    const next = () => new Promise<void>((resolve) => (heard = resolve))
    await client.connect(
      new TransportV2(app.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    )
    return { client, updates, next }
  }

  it("reads a change under the caller's view: its tenant sees it, another tenant does not", async () => {
    const made = (await (await post('t1', 'seen by t1')).json()) as { data: { id: number } }
    const caller = { userId: '1', scopes: ['mcp:read'] }
    expect(await watch.sees({ ...caller, tenantId: 't1' }, 'tickets', made.data.id)).toBe(true)
    expect(await watch.sees({ ...caller, tenantId: 't2' }, 'tickets', made.data.id)).toBe(false)
    expect(
      await watch.sees({ ...caller, tenantId: 't1', grant: {} }, 'tickets', made.data.id),
    ).toBe(false)
    // A hard delete cannot be read: told to a tenant only of a record its stream was told of.
    const t1 = { ...caller, tenantId: 't1' }
    expect(await watch.sawDeleted(t1, 'tickets', made.data.id, false)).toBe(false)
    expect(await watch.sawDeleted(t1, 'tickets', made.data.id, true)).toBe(true)
    expect(await watch.sawDeleted(caller, 'tickets', made.data.id, false)).toBe(true)
    expect(await watch.subscribable({ ...caller, grant: {} }, [URI])).toEqual([])
    expect(await watch.subscribable({ ...caller, scopes: [] }, [URI])).toEqual([])
    expect(await watch.subscribable(caller, [URI, 'kiln://models/nope'])).toEqual([URI])
  })

  describe('2026-07-28: subscriptions/listen', () => {
    it('is acknowledged for a readable model and notified after a REST write in view', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'modern')
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [URI] })
      const heard = next()
      expect((await post('t1', 'mine')).status).toBe(201)
      await heard
      expect(updates).toEqual([URI])
      await subscription.close()
      await client.close()
    })

    it('is notified of an MCP write too (crud_create of another client)', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'modern')
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      const writer = await connect(await token('t1', undefined, 'mcp:read mcp:write'), 'modern')
      const heard = next()
      const made = await writer.client.callTool({
        name: 'crud_create',
        arguments: { model: 'tickets', data: { tenant_id: 't1', title: 'by an assistant' } },
      })
      expect(made.isError ?? false, JSON.stringify(made.content)).toBe(false)
      await heard
      expect(updates).toEqual([URI])
      await subscription.close()
      await writer.client.close()
      await client.close()
    })

    it('honours nothing for a token without the model in its grant', async () => {
      const { client } = await connect(await token('t1', { other: ['read'] }), 'modern')
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      expect(subscription.honoredFilter).toEqual({})
      expect(await subscription.closed).toBe('graceful')
      await client.close()
    })
  })

  describe('2025-11-25: resources/subscribe and the session stream', () => {
    it('subscribes within the session and is notified on its GET stream', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'legacy')
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
      await client.subscribeResource({ uri: URI })
      const heard = next()
      expect((await post('t1', 'legacy')).status).toBe(201)
      await heard
      expect(updates).toEqual([URI])
      await client.unsubscribeResource({ uri: URI })
      await client.close()
    })

    it('refuses a token without the model in its grant, as an unknown resource', async () => {
      const { client } = await connect(await token('t1', { other: ['read'] }), 'legacy')
      await expect(client.subscribeResource({ uri: URI })).rejects.toMatchObject({
        code: -32602,
      })
      await client.close()
    })
  })
})
