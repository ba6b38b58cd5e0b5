/**
 * Webhook baselines, hand-written on node:http: read the body, check `x-hub-signature-256`
 * (HMAC-SHA256, constant time), parse the JSON, then
 * - KILN_BENCH_WEBHOOK=floor (default): answer `{"received":true}` — the floor;
 * - KILN_BENCH_WEBHOOK=bullmq: `await queue.add()` the raw body on BullMQ first — the obvious
 *   hand-written handler (no dedup), on REDIS_URL under a key prefix it deletes at the end.
 *
 * Run by the benchmarks with `startServer`; the secret is KILN_BENCH_SECRET.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { listen, serverReady } from '../http/index.ts'

const secret = process.env.KILN_BENCH_SECRET ?? ''
const prefix = `kiln-bench-hw-${process.pid}`
const connection =
  process.env.KILN_BENCH_WEBHOOK === 'bullmq'
    ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null })
    : undefined
const queue = connection ? new Queue('jobs', { connection, prefix }) : undefined

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', async () => {
    const body = Buffer.concat(chunks)
    const header = req.headers['x-hub-signature-256']
    const expected = createHmac('sha256', secret).update(body).digest()
    const received =
      typeof header === 'string' && header.startsWith('sha256=')
        ? Buffer.from(header.slice(7), 'hex')
        : Buffer.alloc(0)
    if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Invalid signature')
      return
    }
    let text: string
    try {
      text = body.toString('utf8')
      JSON.parse(text)
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Invalid JSON')
      return
    }
    if (queue) {
      try {
        await queue.add('ProcessMessagingWebhook', { payload_json: text })
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`Queue error: ${error}`)
        return
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}')
  })
})

serverReady({ port: await listen(server) }, async () => {
  if (!connection || !queue) return
  await queue.obliterate({ force: true }).catch(() => {})
  await queue.close()
  connection.disconnect()
})
