import { createHmac } from 'node:crypto'
import { Hono } from 'hono'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  BullMqQueue,
  MemoryQueue,
  type Queue,
  type Redis,
  RedisConnections,
  silentLogger,
} from '../../src/core/index.ts'
import {
  messagingWebhook,
  PROCESS_MESSAGING_WEBHOOK,
  QueueDeduplicationStore,
} from '../../src/messaging/index.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { countSocketWrites } from '../support/sockets.ts'
import { APP_SECRET, testConfig } from './support.ts'

/** A signed inbound notification carrying the given message ids (none: a status). */
function notification(ids: string[]): { body: string; signature: string } {
  const messages = ids.map((id) => ({
    from: '12025550143',
    id,
    timestamp: '1763740800',
    text: { body: 'hi' },
    type: 'text',
  }))
  const value = ids.length > 0 ? { messages } : { statuses: [{ id: 'wamid.s', status: 'read' }] }
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: '2', changes: [{ field: 'messages', value }] }],
  })
  return {
    body,
    signature: `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
  }
}

function webhook(queue: Queue, dedup = new QueueDeduplicationStore(queue)) {
  const app = new Hono()
  app.route('/', messagingWebhook({ config: testConfig(), queue, dedup, logger: silentLogger() }))
  return (ids: string[]) => {
    const { body, signature } = notification(ids)
    return app.request('/messaging/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    })
  }
}

describe('QueueDeduplicationStore with the memory queue', () => {
  it('queues a message once within the window; batches queue when any id is new', async () => {
    const queue = new MemoryQueue()
    const jobs: string[] = []
    queue.work({
      [PROCESS_MESSAGING_WEBHOOK]: async (p: { payload_json: string }) =>
        void jobs.push(p.payload_json),
    })
    const post = webhook(queue)
    expect((await post(['wamid.a'])).status).toBe(200)
    expect((await post(['wamid.a'])).status).toBe(200)
    expect((await post(['wamid.a', 'wamid.b'])).status).toBe(200) // b is new: queued
    expect((await post(['wamid.b', 'wamid.a'])).status).toBe(200) // both seen: not queued
    expect((await post([])).status).toBe(200) // a status: always queued
    expect((await post([])).status).toBe(200)
    await queue.drain()
    expect(jobs.map((j) => JSON.parse(j).entry[0].changes[0].value.messages?.length ?? 0)).toEqual([
      1, 2, 0, 0,
    ])
    await queue.close()
  })

  it('refuses a queue that keeps no deduplication ids', () => {
    const queue = { enqueue: async () => ({ id: 'x' }) } as unknown as Queue
    expect(() => new QueueDeduplicationStore(queue)).toThrow(TypeError)
  })
})

describeWithRedis('QueueDeduplicationStore with BullMQ', () => {
  let redis: TestRedis
  let queue: BullMqQueue
  let producer: Redis | undefined
  let commands: string[]
  let connections: RedisConnections

  beforeEach(async () => {
    redis = await createTestRedis()
    commands = []
    // Records what the queue's producer connection sends (the real client, only observed).
    connections = new RedisConnections(redis.connections.url)
    const connect = connections.connect.bind(connections)
    connections.connect = (options) => {
      const client = connect(options)
      if (options?.name === 'kiln-queue') {
        producer = client
        const send = client.sendCommand.bind(client)
        client.sendCommand = (command, ...rest) => {
          commands.push(command.name)
          return send(command, ...rest)
        }
      }
      return client
    }
    queue = new BullMqQueue({ connections, name: 'jobs', prefix: redis.prefix })
  })
  afterEach(async () => {
    await queue.close()
    await connections.close()
    await redis.cleanup()
  })

  const waiting = async () => (await queue.failed()).length + Number(await jobCount())
  const jobCount = () => producer?.llen(`${redis.prefix}:jobs:wait`)

  it('a new message is marked and queued in one Redis round trip; a redelivery queues nothing', async () => {
    const post = webhook(queue)
    expect((await post([])).status).toBe(200) // warms the connection and BullMQ's scripts
    commands.length = 0
    expect((await post(['wamid.one'])).status).toBe(200)
    expect(commands).toEqual(['evalsha'])
    commands.length = 0
    expect((await post(['wamid.one'])).status).toBe(200)
    expect(commands).toEqual(['evalsha'])
    expect(await waiting()).toBe(2) // the status and the first delivery
    const mark = await producer?.pttl(`${redis.prefix}:jobs:de:wamid.one`)
    expect(mark).toBeGreaterThan(0) // the 5-minute window, kept whatever becomes of the job
  })

  it('a batch of several ids is marked in one pipeline, then queued when any is new', async () => {
    const post = webhook(queue)
    expect((await post(['wamid.x'])).status).toBe(200)
    expect((await post(['wamid.x', 'wamid.y'])).status).toBe(200)
    expect((await post(['wamid.y', 'wamid.x'])).status).toBe(200)
    expect((await post(['wamid.y'])).status).toBe(200) // seen in the batch: the same keys
    expect(await waiting()).toBe(2)
  })

  it('an enqueue that fails answers 500 Queue error and leaves no mark: the retry is queued', async () => {
    const post = webhook(queue)
    expect((await post([])).status).toBe(200)
    const failing = producer as Redis
    const send = failing.sendCommand.bind(failing)
    failing.sendCommand = (command, ...rest) => {
      if (command.name === 'evalsha') command.reject(new Error('OOM command not allowed'))
      else return send(command, ...rest)
      return command.promise
    }
    const refused = await post(['wamid.retry'])
    expect(refused.status).toBe(500)
    expect(await refused.text()).toMatch(/^Queue error: /)
    failing.sendCommand = send
    expect(await producer?.exists(`${redis.prefix}:jobs:de:wamid.retry`)).toBe(0)
    expect((await post(['wamid.retry'])).status).toBe(200)
    expect(await waiting()).toBe(2)
  })

  /** Makes the producer refuse the add script for notifications naming one of `ids` (else all). */
  function refuseAdds(client: Redis, ids?: string[]): () => void {
    const send = client.sendCommand.bind(client)
    // The job's data, the notification as received, is a string argument of the add script.
    const names = (arg: unknown) => typeof arg === 'string' && ids?.some((id) => arg.includes(id))
    client.sendCommand = (command, ...rest) => {
      if (command.name !== 'evalsha' || (ids && !command.args.some(names))) {
        return send(command, ...rest)
      }
      command.reject(new Error('OOM command not allowed'))
      return command.promise
    }
    return () => {
      client.sendCommand = send
    }
  }

  const marked = async (id: string) => producer?.exists(`${redis.prefix}:jobs:de:${id}`)

  it('a lone delivery is sent at once: nothing waits for a batch to fill', async () => {
    const post = webhook(queue)
    expect((await post(['wamid.alone'])).status).toBe(200)
    expect(await waiting()).toBe(1)
  })

  it('concurrent deliveries leave in one write and each is acknowledged once stored', async () => {
    const post = webhook(queue)
    expect((await post([])).status).toBe(200) // connects and loads BullMQ's scripts
    const counter = countSocketWrites((producer as Redis).stream)
    const ids = Array.from({ length: 20 }, (_, i) => `wamid.burst${i}`)
    const answers = await Promise.all(ids.map((id) => post([id])))
    counter.restore()
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200))
    expect(counter.writes).toBe(1)
    expect(await waiting()).toBe(21)
  })

  it('deduplicates within one batch and across batches; a redelivery queues nothing', async () => {
    const post = webhook(queue)
    const first = await Promise.all([post(['wamid.a']), post(['wamid.a']), post(['wamid.b'])])
    expect(first.map((a) => a.status)).toEqual([200, 200, 200])
    expect(await waiting()).toBe(2)
    const second = await Promise.all([post(['wamid.b']), post(['wamid.c']), post(['wamid.a'])])
    expect(second.map((a) => a.status)).toEqual([200, 200, 200])
    expect(await waiting()).toBe(3)
  })

  it('a batch that fails answers every delivery in it 500 Queue error and marks none', async () => {
    const post = webhook(queue)
    expect((await post([])).status).toBe(200)
    const restore = refuseAdds(producer as Redis)
    const ids = ['wamid.f1', 'wamid.f2', 'wamid.f3', 'wamid.f4']
    const refused = await Promise.all(ids.map((id) => post([id])))
    restore()
    for (const answer of refused) {
      expect(answer.status).toBe(500)
      expect(await answer.text()).toMatch(/^Queue error: /)
    }
    expect(await Promise.all(ids.map(marked))).toEqual([0, 0, 0, 0])
    expect(await waiting()).toBe(1)
    // The provider retries: every delivery is queued now, nothing was lost.
    const retried = await Promise.all(ids.map((id) => post([id])))
    expect(retried.map((a) => a.status)).toEqual([200, 200, 200, 200])
    expect(await waiting()).toBe(5)
  })

  it('in a batch where some adds fail, only the stored deliveries are acknowledged', async () => {
    const post = webhook(queue)
    expect((await post([])).status).toBe(200)
    const restore = refuseAdds(producer as Redis, ['wamid.p2', 'wamid.p4'])
    const ids = ['wamid.p1', 'wamid.p2', 'wamid.p3', 'wamid.p4']
    const answers = await Promise.all(ids.map((id) => post([id])))
    restore()
    expect(answers.map((a) => a.status)).toEqual([200, 500, 200, 500])
    expect(await Promise.all(ids.map(marked))).toEqual([1, 0, 1, 0])
    expect(await waiting()).toBe(3)
    const retried = await Promise.all(ids.map((id) => post([id])))
    expect(retried.map((a) => a.status)).toEqual([200, 200, 200, 200])
    expect(await waiting()).toBe(5) // p2 and p4 now; p1 and p3 were redeliveries
  })
})
