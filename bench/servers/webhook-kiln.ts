/**
 * kiln's messaging webhook as one demo instance with REDIS_URL serves it: `messagingWebhook`
 * with BullMQ from `createSharedState` and the queue's own dedup (as the demo wires it), under a key prefix deleted at
 * the end. Run by the benchmarks with `startServer`; the app secret is KILN_BENCH_SECRET.
 */
import { Hono } from 'hono'
import { createSharedState } from '../../src/core/index.ts'
import {
  MessagingConfig,
  messagingWebhook,
  QueueDeduplicationStore,
} from '../../src/messaging/index.ts'
import { serveFetch, serverReady } from '../http/index.ts'

const prefix = `kiln-bench-${process.pid}`
const shared = await createSharedState({
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix,
})
const config = new MessagingConfig({
  appSecret: process.env.KILN_BENCH_SECRET ?? '',
  accessToken: 'bench-access-token',
  verifyToken: 'bench-verify-token',
  phoneNumberId: '100000000000001',
})
const app = new Hono()
app.route(
  '/',
  messagingWebhook({
    config,
    queue: shared.queue,
    dedup: new QueueDeduplicationStore(shared.queue),
  }),
)

serverReady({ port: await serveFetch(app.fetch) }, async () => {
  const client = shared.client
  if (client) {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await client.del(...keys)
    } while (cursor !== '0')
  }
  await shared.close()
})
