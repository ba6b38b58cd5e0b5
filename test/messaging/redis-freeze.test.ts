import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BullMqQueue,
  RedisConnections,
  RedisKeyValueStore,
  silentLogger,
} from '../../src/core/index.ts'
import {
  createMessagingEventBus,
  type MessagingTextReceived,
  messagingJobHandlers,
  messagingWebhook,
  PROCESS_MESSAGING_WEBHOOK,
  QueueDeduplicationStore,
  staticOwners,
} from '../../src/messaging/index.ts'
import { type OwnRedis, serversAvailable, startOwnRedis } from '../production/servers.ts'
import { fixtureBytes, listen, OWNER, readyClient, signatureOf, testConfig } from './support.ts'

/**
 * Redis frozen (SIGSTOP: its connections stay open, nothing answers) while a worker runs a
 * webhook's job, right before the listener claims the message (issue #39). The claim's
 * command times out on the client but was already sent, so the thawed Redis runs it: a claim
 * nobody holds. The job's retries must still reach the listener, once.
 */
/** Runs of the job in all: their backoff ends well within the claim's 30 s life. */
const ATTEMPTS = 4

describe.skipIf(!serversAvailable)('messaging with Redis frozen mid-job', () => {
  let redis: OwnRedis
  let connections: RedisConnections
  let claims: RedisConnections
  const closers: (() => Promise<void>)[] = []

  beforeAll(async () => {
    redis = await startOwnRedis()
    connections = new RedisConnections(redis.url)
    // The listeners' store with a short REDIS_COMMAND_TIMEOUT_MS: the frozen claim fails soon.
    claims = new RedisConnections(redis.url, {}, 1_000)
  }, 60_000)

  afterAll(async () => {
    await redis?.thaw()
    for (const close of closers.splice(0).reverse()) await close()
    await claims?.close()
    await connections?.close()
    await redis?.stop()
  })

  it('a message acknowledged before Redis froze mid-job is handled once after the thaw', async () => {
    const queue = new BullMqQueue({
      connections,
      name: 'jobs',
      prefix: 'freeze',
      retry: { attempts: ATTEMPTS, backoffMs: 20 },
      logger: silentLogger(),
    })
    closers.push(() => queue.close())
    const kv = new RedisKeyValueStore(await readyClient(claims), { prefix: 'freeze:' })
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({
        config: testConfig(),
        queue,
        dedup: new QueueDeduplicationStore(queue),
        logger: silentLogger(),
      }),
    )
    const server = await listen(app)
    closers.push(() => server.close())

    const bus = createMessagingEventBus({ store: kv, logger: silentLogger() })
    const handled: MessagingTextReceived[] = []
    bus.on('MessagingTextReceived', (event) => void handled.push(event), 'store')
    const handleJob = messagingJobHandlers({ bus, isOwner: staticOwners([OWNER]) })[
      PROCESS_MESSAGING_WEBHOOK
    ]
    if (!handleJob) throw new Error('no ProcessMessagingWebhook handler')
    // The first run finds Redis frozen once it has the job; Redis thaws once that run failed.
    // The test waits for the run that succeeds or the last one, not on Redis while it is frozen.
    let settle!: () => void
    const settled = new Promise<void>((resolve) => (settle = resolve))
    const worker = queue.work({
      async [PROCESS_MESSAGING_WEBHOOK](payload, job) {
        const freezing = job.attempt === 1
        if (freezing) await redis.freeze()
        try {
          await handleJob(payload, job)
          settle()
        } catch (error) {
          if (job.attempt >= ATTEMPTS) settle()
          throw error
        } finally {
          if (freezing) await redis.thaw()
        }
      },
    })
    closers.push(() => worker.close())

    const answer = await fetch(`${server.url}/messaging/webhook`, {
      method: 'POST',
      headers: {
        'x-hub-signature-256': signatureOf('inbound-text-customer.json'),
        'content-type': 'application/json',
      },
      body: fixtureBytes('inbound-text-customer.json'),
    })
    expect(answer.status).toBe(200)
    await settled
    expect(handled).toHaveLength(1)
    await queue.drain()
    expect(await queue.failed()).toEqual([])
  }, 60_000)
})
