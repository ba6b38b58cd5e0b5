import { Hono } from 'hono'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  BullMqQueue,
  RedisConnections,
  RedisKeyValueStore,
  silentLogger,
} from '../../src/core/index.ts'
import {
  createMessagingEventBus,
  KeyValueDeduplicationStore,
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  messagingJobHandlers,
  messagingWebhook,
  PROCESS_MESSAGING_WEBHOOK,
  staticOwners,
} from '../../src/messaging/index.ts'
import { freePort } from '../support/processes.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import {
  APP_SECRET,
  fixtureBytes,
  listen,
  OWNER,
  readyClient,
  signatureOf,
  testConfig,
} from './support.ts'

const CUSTOMER_WAMID = 'wamid.HBgLMTIwMjU1NTAxNDMVAgASGBRGQUtFMDAwMDAwMDAwMDAwMDAw01AA=='

describeWithRedis('messaging on Redis: webhook → BullMQ → worker → listener', () => {
  let redis: TestRedis
  const closers: (() => Promise<void>)[] = []

  beforeEach(async () => {
    redis = await createTestRedis()
  })
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close()
    await redis.cleanup()
  })

  /** One "instance": its own connections to the shared Redis, its webhook on 127.0.0.1. */
  async function instance(queueConnections: RedisConnections = redis.connections) {
    const queue = new BullMqQueue({
      connections: queueConnections,
      name: 'jobs',
      prefix: redis.prefix,
      retry: { attempts: 3, backoffMs: 10 },
      logger: silentLogger(),
    })
    closers.push(() => queue.close())
    const kv = new RedisKeyValueStore(await readyClient(redis.connections), {
      prefix: `${redis.prefix}:`,
    })
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({
        config: testConfig(),
        queue,
        dedup: new KeyValueDeduplicationStore(kv),
        logger: silentLogger(),
      }),
    )
    const server = await listen(app)
    closers.push(() => server.close())
    return { queue, kv, url: server.url }
  }

  function deliver(url: string, name: string) {
    return fetch(`${url}/messaging/webhook`, {
      method: 'POST',
      headers: { 'x-hub-signature-256': signatureOf(name), 'content-type': 'application/json' },
      body: fixtureBytes(name),
    })
  }

  function startWorker(queue: BullMqQueue, kv: RedisKeyValueStore) {
    const bus = createMessagingEventBus({ store: kv, logger: silentLogger() })
    const texts: MessagingTextReceived[] = []
    const statuses: MessagingStatusUpdate[] = []
    bus.on('MessagingTextReceived', (e) => void texts.push(e), 'record')
    bus.on('MessagingStatusUpdate', (e) => void statuses.push(e), 'record')
    const worker = queue.work(messagingJobHandlers({ bus, isOwner: staticOwners([OWNER]) }))
    closers.push(() => worker.close())
    return { bus, texts, statuses }
  }

  it('delivers each message to its listener once, even across two instances receiving duplicates', async () => {
    const a = await instance()
    const b = await instance()
    const { texts, statuses } = startWorker(a.queue, a.kv)
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => deliver(a.url, 'inbound-text-customer.json')),
      ...Array.from({ length: 10 }, () => deliver(b.url, 'inbound-text-customer.json')),
      deliver(b.url, 'status-delivered.json'),
    ])
    expect(answers.map((r) => r.status)).toEqual(Array(21).fill(200))
    await a.queue.drain()
    expect(texts.map((t) => [t.wamid, t.sender_identity.kind, t.text])).toEqual([
      [CUSTOMER_WAMID, 'Customer', 'Hi, do you have the blue one in stock?'],
    ])
    expect(statuses.map((s) => s.status)).toEqual(['Delivered'])
  })

  it('a failing listener is retried by BullMQ; the listener that succeeded runs once', async () => {
    const a = await instance()
    const { bus, texts } = startWorker(a.queue, a.kv)
    let flaky = 0
    bus.on(
      'MessagingTextReceived',
      () => {
        if (++flaky < 3) throw new Error('downstream unavailable')
      },
      'flaky',
    )
    expect((await deliver(a.url, 'inbound-text-owner.json')).status).toBe(200)
    await a.queue.drain()
    expect(flaky).toBe(3)
    expect(texts).toHaveLength(1)
    expect(texts[0]?.sender_identity).toEqual({ kind: 'Owner', phone: OWNER })
    expect(await a.queue.failed()).toEqual([])
  })

  it('the same notification processed twice (dedup expired, a second worker) reaches listeners once', async () => {
    const a = await instance()
    const { texts } = startWorker(a.queue, a.kv)
    const payload = { payload_json: fixtureBytes('inbound-text-customer.json').toString('utf8') }
    await a.queue.enqueue(PROCESS_MESSAGING_WEBHOOK, payload)
    await a.queue.enqueue(PROCESS_MESSAGING_WEBHOOK, payload)
    await a.queue.drain()
    expect(texts).toHaveLength(1)
  })

  it('queue down: 500 Queue error, nothing lost — the retry is queued and processed once', async () => {
    const port = await freePort()
    const down = new RedisConnections(`redis://127.0.0.1:${port}`)
    closers.push(() => down.close())
    const broken = await instance(down)
    const failed = await deliver(broken.url, 'inbound-text-customer.json')
    expect(failed.status).toBe(500)
    const text = await failed.text()
    expect(text).toMatch(/^Queue error: \S/)
    expect(text).not.toContain(APP_SECRET)

    // The provider retries (to this or another instance) once the queue is back.
    const healthy = await instance()
    const { texts } = startWorker(healthy.queue, healthy.kv)
    expect((await deliver(healthy.url, 'inbound-text-customer.json')).status).toBe(200)
    expect((await deliver(broken.url, 'inbound-text-customer.json')).status).toBe(200) // now a duplicate
    await healthy.queue.drain()
    expect(texts.map((t) => t.wamid)).toEqual([CUSTOMER_WAMID])
  })
})
