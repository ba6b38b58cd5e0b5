import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createSharedState, type SharedState } from '../../../src/core/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { INITIALIZE } from '../support/client.ts'
import { createTickets, type TicketsInstance, ticketsInstance, UPDATED, URI } from './support.ts'

/**
 * Two instances of one app behind a load balancer: one database, one Redis, each its own shared
 * state, realtime core and `/mcp`, as two processes would have them. Any instance answers any
 * request: a subscriber hears writes made on the other, and a 2025 session's subscription made
 * through one is heard on the stream the other holds.
 */
describeEachDatabase('MCP resource subscriptions across instances sharing Redis', (backend) => {
  let test: TestDatabase
  let redis: TestRedis
  const shared: SharedState[] = []
  let a: TicketsInstance
  let b: TicketsInstance

  beforeAll(async () => {
    test = await backend.create()
    redis = await createTestRedis()
    const tickets = await createTickets(test.database)
    for (let i = 0; i < 2; i++) {
      shared.push(await createSharedState({ redisUrl: redisUrl!, prefix: redis.prefix }))
    }
    const prefix = `${redis.prefix}:realtime:`
    ;[a, b] = (await Promise.all(
      shared.map((state) =>
        ticketsInstance(test.database, tickets, {
          realtime: { shared: state, prefix },
          store: state.kv,
        }),
      ),
    )) as [TicketsInstance, TicketsInstance]
  })

  afterAll(async () => {
    await a?.close()
    await b?.close()
    for (const state of shared) await state.close()
    await redis?.cleanup()
    await test?.cleanup()
  })

  it('2026-07-28: a listen on one instance hears a REST write made on the other', async () => {
    const client = new ClientV2(
      { name: 'kiln-subscriber', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    const heard = new Promise<string>((resolve) =>
      client.setNotificationHandler(UPDATED, (n) => resolve(n.params.uri)),
    )
    const bearer = await a.token('t1')
    await client.connect(
      new TransportV2(a.app.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    )
    const subscription = await client.listen({ resourceSubscriptions: [URI] })
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [URI] })
    expect((await b.post('t1', 'written on b')).status).toBe(201)
    expect(await heard).toBe(URI)
    await subscription.close()
    await client.close()
  })

  it('2025-11-25: subscribed through one instance, heard on the GET stream the other holds', async () => {
    const rpc = async (instance: TicketsInstance, body: object, session?: string) =>
      fetch(instance.app.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await instance.token('t1')}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      })
    const session = (await rpc(a, INITIALIZE)).headers.get('mcp-session-id')
    expect(session).toBeTruthy()
    const stream = await fetch(a.app.mcpUrl, {
      headers: {
        authorization: `Bearer ${await a.token('t1')}`,
        accept: 'text/event-stream',
        'mcp-session-id': session!,
      },
    })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toBe('text/event-stream')
    const subscribe = { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: URI } }
    const answer = await rpc(b, subscribe, session!)
    expect(await answer.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} })
    expect((await b.post('t1', 'written on b too')).status).toBe(201)
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    while (!text.includes('\n\n')) text += (await reader.read()).value ?? ''
    await reader.cancel()
    const data = JSON.parse(/^data: (.*)$/m.exec(text)![1]!)
    expect(data).toEqual({ jsonrpc: '2.0', method: UPDATED, params: { uri: URI } })
  })
})
