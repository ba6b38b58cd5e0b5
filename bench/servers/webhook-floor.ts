/**
 * Webhook baselines: read the body, check `x-hub-signature-256` (HMAC-SHA256, constant time),
 * parse the JSON, then
 * - KILN_BENCH_WEBHOOK=floor (default): answer `{"received":true}` on node:http — the floor;
 * - KILN_BENCH_WEBHOOK=hono: the same, as one Hono route served by @hono/node-server (as kiln
 *   apps are served) — what the framework costs before kiln does anything;
 * - KILN_BENCH_WEBHOOK=bullmq: on node:http, `await queue.add()` the raw body on BullMQ first —
 *   the obvious hand-written handler (no dedup), on REDIS_URL under a key prefix it deletes at
 *   the end.
 *
 * Run by the benchmarks with `startServer`; the secret is KILN_BENCH_SECRET.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import { Queue } from 'bullmq'
import { Hono } from 'hono'
import { Redis } from 'ioredis'
import { listen, serveFetch, serverReady } from '../http/index.ts'

const secret = process.env.KILN_BENCH_SECRET ?? ''
const mode = process.env.KILN_BENCH_WEBHOOK ?? 'floor'
const prefix = `kiln-bench-hw-${process.pid}`
const connection =
  mode === 'bullmq'
    ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null })
    : undefined
const queue = connection ? new Queue('jobs', { connection, prefix }) : undefined

/** The signature check and parse every baseline makes: the body's text, or the failure's answer. */
function checkedText(
  body: Buffer,
  header: string | undefined,
): { text: string } | { status: 400 | 401; message: string } {
  const expected = createHmac('sha256', secret).update(body).digest()
  const received =
    typeof header === 'string' && header.startsWith('sha256=')
      ? Buffer.from(header.slice(7), 'hex')
      : Buffer.alloc(0)
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    return { status: 401, message: 'Invalid signature' }
  }
  try {
    const text = body.toString('utf8')
    JSON.parse(text)
    return { text }
  } catch {
    return { status: 400, message: 'Invalid JSON' }
  }
}

const RECEIVED = '{"received":true}'

async function listenHono(): Promise<number> {
  const app = new Hono()
  app.post('/messaging/webhook', async (c) => {
    const checked = checkedText(
      Buffer.from(await c.req.arrayBuffer()),
      c.req.header('x-hub-signature-256'),
    )
    if ('message' in checked) return c.text(checked.message, checked.status)
    return c.body(RECEIVED, 200, { 'content-type': 'application/json' })
  })
  return serveFetch(app.fetch)
}

function listenNode(): Promise<number> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const header = req.headers['x-hub-signature-256']
      const checked = checkedText(
        Buffer.concat(chunks),
        typeof header === 'string' ? header : undefined,
      )
      if ('message' in checked) {
        res.writeHead(checked.status, { 'content-type': 'text/plain' }).end(checked.message)
        return
      }
      if (queue) {
        try {
          await queue.add('ProcessMessagingWebhook', { payload_json: checked.text })
        } catch (error) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`Queue error: ${error}`)
          return
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(RECEIVED)
    })
  })
  return listen(server)
}

serverReady({ port: await (mode === 'hono' ? listenHono() : listenNode()) }, async () => {
  if (!connection || !queue) return
  await queue.obliterate({ force: true }).catch(() => {})
  await queue.close()
  connection.disconnect()
})
