import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import {
  createTickets,
  type TicketsInstance,
  ticketsInstance,
  ticketsTable,
  UPDATED,
  URI,
} from './support.ts'

const recordUri = (id: number) => `${URI}/records/${id}`

describeEachDatabase('MCP record resources and leaving the view', (backend) => {
  let test: TestDatabase
  let instance: TicketsInstance

  beforeAll(async () => {
    test = await backend.create()
    instance = await ticketsInstance(test.database, await createTickets(test.database))
  })

  afterAll(async () => {
    await instance?.close()
    await test?.cleanup()
  })

  /** A v2 SDK client with a token of `tenant`, in the era `version` asks for. */
  const connect = async (tenant: string, version: 'modern' | 'legacy') =>
    connectTo(instance, await instance.token(tenant), version)

  async function connectTo(to: TicketsInstance, bearer: string, version: 'modern' | 'legacy') {
    const client = new ClientV2(
      { name: 'kiln-record-subscriber', version: '1' },
      version === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    )
    const updates: string[] = []
    client.setNotificationHandler(UPDATED, (notification) => {
      updates.push(notification.params.uri)
    })
    await client.connect(
      new TransportV2(to.app.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    )
    return { client, updates }
  }

  async function post(tenant: string, title: string): Promise<number> {
    const made = (await (await instance.post(tenant, title)).json()) as { data: { id: number } }
    return made.data.id
  }

  async function patch(id: number, data: { tenant_id?: string; title?: string }) {
    expect((await instance.patch(id, data)).status).toBe(200)
  }

  const heard = (updates: string[], uri: string, times: number) =>
    vi.waitFor(() => expect(updates.filter((u) => u === uri)).toHaveLength(times), {
      timeout: 5_000,
    })

  it('notifies a model subscription when a record it was told of leaves the view', async () => {
    const { client, updates } = await connect('t1', 'modern')
    const subscription = await client.listen({ resourceSubscriptions: [URI] })
    const id = await post('t1', 'moving')
    await heard(updates, URI, 1)
    // Another tenant's now: out of t1's view, but t1 was told of it.
    await patch(id, { tenant_id: 't2' })
    await heard(updates, URI, 2)
    // Out of view before and after: not told.
    await patch(id, { title: 'still t2' })
    await post('t1', 'sync')
    await heard(updates, URI, 3)
    await subscription.close()
    await client.close()
  })

  it("reads a record as crud_list shows it, and another tenant's as not found", async () => {
    const id = await post('t1', 'readable')
    const { client } = await connect('t1', 'modern')
    const read = await client.readResource({ uri: recordUri(id) })
    expect(read.contents).toEqual([
      { uri: recordUri(id), mimeType: 'application/json', text: expect.any(String) },
    ])
    const listed = await client.callTool({
      name: 'crud_list',
      arguments: { model: 'tickets', filters: { id } },
    })
    const shown = (listed.structuredContent as { records: unknown[] }).records[0]
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(shown)
    const other = await connect('t2', 'modern')
    for (const uri of [recordUri(id), `${URI}/records/999999`, `${URI}/records/not-a-key`]) {
      await expect(other.client.readResource({ uri })).rejects.toMatchObject({ code: -32602 })
    }
    await other.client.close()
    await client.close()
  })

  it('2026-07-28: a record subscription hears its record only, and its leaving the view', async () => {
    const [mine, another] = [await post('t1', 'mine'), await post('t1', 'another')]
    const hidden = await post('t2', 'not t1s')
    const { client, updates } = await connect('t1', 'modern')
    const subscription = await client.listen({
      resourceSubscriptions: [recordUri(mine), recordUri(hidden), URI],
    })
    // Another tenant's record answers as an unknown resource: left out of the acknowledgement.
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [recordUri(mine), URI] })
    await patch(another, { title: 'another, changed' })
    await heard(updates, URI, 1)
    await patch(mine, { title: 'mine, changed' })
    await heard(updates, recordUri(mine), 1)
    await patch(mine, { tenant_id: 't2' })
    await heard(updates, recordUri(mine), 2)
    // Out of view before and after: the model's next change is heard, the record's is not.
    await patch(mine, { title: 'gone' })
    await patch(another, { title: 'sync' })
    await heard(updates, URI, 4)
    expect(updates.filter((uri) => uri !== URI)).toEqual([recordUri(mine), recordUri(mine)])
    await subscription.close()
    await client.close()
  })

  it('2025-11-25: resources/subscribe to a record hears its record only', async () => {
    const [mine, another] = [await post('t1', 'legacy mine'), await post('t1', 'legacy other')]
    const { client, updates } = await connect('t1', 'legacy')
    await client.subscribeResource({ uri: recordUri(mine) })
    await patch(another, { title: 'not heard' })
    await patch(mine, { title: 'heard' })
    await heard(updates, recordUri(mine), 1)
    await patch(mine, { tenant_id: 't2' })
    await heard(updates, recordUri(mine), 2)
    expect(updates).toEqual([recordUri(mine), recordUri(mine)])
    const other = await connect('t2', 'legacy')
    const hidden = await post('t1', 'not t2s')
    await expect(other.client.subscribeResource({ uri: recordUri(hidden) })).rejects.toMatchObject({
      code: -32602,
    })
    await other.client.close()
    await client.unsubscribeResource({ uri: recordUri(mine) })
    await client.close()
  })

  describe('under a row filter (no titles starting "secret")', () => {
    let filtered: TicketsInstance

    beforeAll(async () => {
      filtered = await ticketsInstance(test.database, ticketsTable(test.database.dialect), {
        rows: () => ({ where: sql`title not like 'secret%'`, key: 'no-secrets' }),
      })
    })

    afterAll(() => filtered?.close())

    it('reads and subscribes no record the filter hides, in either era', async () => {
      const secret = await post('t1', 'secret plan')
      const uri = recordUri(secret)
      const bearer = await filtered.token('t1')
      const modern = await connectTo(filtered, bearer, 'modern')
      await expect(modern.client.readResource({ uri })).rejects.toMatchObject({ code: -32602 })
      const subscription = await modern.client.listen({ resourceSubscriptions: [uri] })
      expect(subscription.honoredFilter).toEqual({})
      await modern.client.close()
      const legacy = await connectTo(filtered, bearer, 'legacy')
      await expect(legacy.client.subscribeResource({ uri })).rejects.toMatchObject({
        code: -32602,
      })
      await legacy.client.close()
    })

    it('notifies a record subscription when an update takes its record out of view', async () => {
      const made = await filtered.post('t1', 'plain')
      const id = ((await made.json()) as { data: { id: number } }).data.id
      const bearer = await filtered.token('t1')
      const { client, updates } = await connectTo(filtered, bearer, 'modern')
      const subscription = await client.listen({ resourceSubscriptions: [recordUri(id)] })
      expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [recordUri(id)] })
      expect((await filtered.patch(id, { title: 'secret now' })).status).toBeLessThan(500)
      await heard(updates, recordUri(id), 1)
      await subscription.close()
      await client.close()
    })
  })
})
