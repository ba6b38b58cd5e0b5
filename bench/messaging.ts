/**
 * Webhook POSTs acknowledged per second: kiln's POST /messaging/webhook (raw bytes, HMAC check,
 * JSON parse, dedup, enqueue ProcessMessagingWebhook, 200) with the memory queue and with BullMQ
 * on Redis, each beside a bare node:http handler that only checks the HMAC. The servers run in
 * a child process on 127.0.0.1; this process is the load generator (keep-alive, 32 requests in
 * flight, ~2 KB bodies, a fresh message id and signature per request so dedup never short-cuts).
 *
 * `npm run bench -- messaging` (Redis from REDIS_URL, default redis://127.0.0.1:6379).
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { Agent, createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createSharedState, MemoryQueue, pingRedis, type Redis, RedisConnections } from 'kiln/core'
import {
  KeyValueDeduplicationStore,
  MemoryDeduplicationStore,
  MessagingConfig,
  messagingWebhook,
  PROCESS_MESSAGING_WEBHOOK,
} from 'kiln/messaging'
import { type BenchOptions, type BenchResult, measure } from './lib.ts'

const SECRET = 'bench_app_secret_not_a_real_one'
const CONCURRENCY = 32
const ROLE = 'KILN_BENCH_MESSAGING_SERVER'

interface Ports {
  bare: number
  memory: number
  bullmq: number | undefined
}

// ---- the servers (child process) ----

async function startServers(redisUrl: string, prefix: string): Promise<void> {
  const config = new MessagingConfig({
    appSecret: SECRET,
    accessToken: 'bench-access-token',
    verifyToken: 'bench-verify-token',
    phoneNumberId: '100000000000001',
  })

  const bare = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const header = req.headers['x-hub-signature-256']
      const expected = createHmac('sha256', SECRET).update(body).digest()
      const received =
        typeof header === 'string' && header.startsWith('sha256=')
          ? Buffer.from(header.slice(7), 'hex')
          : Buffer.alloc(0)
      if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('Invalid signature')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}')
    })
  })

  const memoryQueue = new MemoryQueue()
  memoryQueue.work({ [PROCESS_MESSAGING_WEBHOOK]: async () => {} }, { concurrency: 4 })
  const memoryApp = new Hono()
  memoryApp.route(
    '/',
    messagingWebhook({ config, queue: memoryQueue, dedup: new MemoryDeduplicationStore() }),
  )

  let bullmqApp: Hono | undefined
  let cleanup = async () => {}
  const probe = new RedisConnections(redisUrl)
  const reachable = await pingRedis(probe.connect(), redisUrl).then(
    () => true,
    () => false,
  )
  await probe.close()
  if (reachable) {
    const shared = await createSharedState({ redisUrl, prefix })
    bullmqApp = new Hono()
    bullmqApp.route(
      '/',
      messagingWebhook({
        config,
        queue: shared.queue,
        dedup: new KeyValueDeduplicationStore(shared.kv),
      }),
    )
    cleanup = async () => {
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
    }
  }

  const ports: Ports = {
    bare: await listenOn(bare),
    memory: await serveApp(memoryApp),
    bullmq: bullmqApp ? await serveApp(bullmqApp) : undefined,
  }
  process.on('message', async (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage()
      process.send?.({ cpu: user + system })
    }
    if (message === 'close') {
      await cleanup()
      process.exit(0)
    }
  })
  process.send?.(ports)
}

function listenOn(server: Server): Promise<number> {
  // The load generator keeps its connections; idle ones must outlive a round of the other side.
  server.keepAliveTimeout = 120_000
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )
}

function serveApp(app: Hono): Promise<number> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      resolve(info.port),
    ) as Server
    server.keepAliveTimeout = 120_000
  })
}

if (process.env[ROLE]) {
  const [redisUrl, prefix] = process.env[ROLE].split(' ')
  await startServers(redisUrl ?? 'redis://127.0.0.1:6379', prefix ?? 'kiln-bench')
}

// ---- the load generator (this process) ----

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const runId = randomBytes(4).toString('hex')
let counter = 0
const padding = 'x'.repeat(1400)

/** A ~2 KB inbound text notification with a message id never sent before, and its signature. */
function nextDelivery(): { body: Buffer; signature: string } {
  const id = `wamid.bench${runId}${(counter++).toString(36).padStart(10, '0')}`
  const body = Buffer.from(
    `{"object":"whatsapp_business_account","entry":[{"id":"200000000000002","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"12025550100","phone_number_id":"100000000000001"},"contacts":[{"profile":{"name":"Ana Customer"},"wa_id":"12025550143"}],"messages":[{"from":"12025550143","id":"${id}","timestamp":"1763740800","text":{"body":"${padding}"},"type":"text"}]},"field":"messages"}]}]}`,
  )
  return { body, signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` }
}

async function post(port: number): Promise<void> {
  const delivery = nextDelivery()
  try {
    await send(port, delivery)
  } catch (error) {
    // A kept-alive connection the server closed just as it was reused: send again (once).
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error
    await send(port, delivery)
  }
}

function send(
  port: number,
  { body, signature }: { body: Buffer; signature: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/messaging/webhook',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'x-hub-signature-256': signature,
        },
      },
      (res) => {
        res.resume()
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`)),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

async function startChild(redisUrl: string): Promise<{ child: ChildProcess; ports: Ports }> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, [ROLE]: `${redisUrl} kiln-bench-${runId}` },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ports = await new Promise<Ports>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Ports))
    child.once('exit', (code) => reject(new Error(`benchmark server exited with ${code}`)))
  })
  return { child, ports }
}

/** The server process's CPU time so far, in microseconds. */
function serverCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'cpu' in message) {
        child.off('message', onMessage)
        resolve((message as { cpu: number }).cpu)
      }
    }
    child.on('message', onMessage)
    child.send('cpu')
  })
}

interface Side {
  count: number
  ms: number
  cpuUs: number
  extraUs: number
}

/**
 * Like `compare` in lib.ts (warm-up, then alternating rounds), and also the server process's
 * CPU time per request on each side: a figure the machine's other load cannot move much.
 */
async function compareWithCpu(
  child: ChildProcess,
  subject: () => Promise<void>,
  baseline: () => Promise<void>,
  rounds: number,
  durationMs: number,
  /** Another CPU counter (Redis's), in µs, read around every round. */
  extraCpu: () => Promise<number> = async () => 0,
) {
  const run = async (fn: () => Promise<void>, ms: number): Promise<Side> => {
    const before = await serverCpu(child)
    const extraBefore = await extraCpu()
    const { count, ms: elapsed } = await measure(fn, ms, CONCURRENCY)
    return {
      count,
      ms: elapsed,
      extraUs: (await extraCpu()) - extraBefore,
      cpuUs: (await serverCpu(child)) - before,
    }
  }
  await run(subject, 500)
  await run(baseline, 500)
  const total = {
    subject: { count: 0, ms: 0, cpuUs: 0, extraUs: 0 },
    baseline: { count: 0, ms: 0, cpuUs: 0, extraUs: 0 },
  }
  const add = (into: Side, side: Side) => {
    into.count += side.count
    into.ms += side.ms
    into.cpuUs += side.cpuUs
    into.extraUs += side.extraUs
  }
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      add(total.subject, await run(subject, durationMs))
      add(total.baseline, await run(baseline, durationMs))
    } else {
      add(total.baseline, await run(baseline, durationMs))
      add(total.subject, await run(subject, durationMs))
    }
  }
  const ops = (total.subject.count / total.subject.ms) * 1000
  const baselineOps = (total.baseline.count / total.baseline.ms) * 1000
  return {
    ops,
    baselineOps,
    ratio: ops / baselineOps,
    cpuUs: total.subject.cpuUs / total.subject.count,
    baselineCpuUs: total.baseline.cpuUs / total.baseline.count,
    extraUs: total.subject.extraUs / total.subject.count,
  }
}

/** Redis's own CPU time so far (`INFO cpu`), in microseconds: every client of this Redis counts. */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const seconds = (name: string) =>
    Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0)
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6
}

export default async function run(options: BenchOptions): Promise<BenchResult[]> {
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
  const { child, ports } = await startChild(redisUrl)
  const rounds = options.quick ? 2 : 6
  const durationMs = options.quick ? 1_000 : 3_000
  const baseline = 'bare node:http, HMAC check only'
  const cpuNote = (r: { cpuUs: number; baselineCpuUs: number }) =>
    `server CPU per request ${r.cpuUs.toFixed(0)} µs vs ${r.baselineCpuUs.toFixed(0)} µs (${(r.baselineCpuUs / r.cpuUs).toFixed(2)}× per CPU-second)`
  const results: BenchResult[] = []
  try {
    const memory = await compareWithCpu(
      child,
      () => post(ports.memory),
      () => post(ports.bare),
      rounds,
      durationMs,
    )
    results.push({
      name: 'webhook POST acknowledged, memory queue',
      baseline,
      ops: memory.ops,
      baselineOps: memory.baselineOps,
      ratio: memory.ratio,
      notes: `HMAC + JSON parse + memory dedup + MemoryQueue enqueue; ${cpuNote(memory)}`,
    })
    if (ports.bullmq !== undefined) {
      const bullmqPort = ports.bullmq
      const connections = new RedisConnections(redisUrl)
      const redis = connections.connect()
      await pingRedis(redis, redisUrl)
      const bullmq = await compareWithCpu(
        child,
        () => post(bullmqPort),
        () => post(ports.bare),
        rounds,
        durationMs,
        () => redisCpu(redis),
      ).finally(() => connections.close())
      results.push({
        name: 'webhook POST acknowledged, BullMQ on Redis',
        baseline,
        ops: bullmq.ops,
        baselineOps: bullmq.baselineOps,
        ratio: bullmq.ratio,
        notes: `HMAC + JSON parse + Redis dedup (SET NX PX) + BullMQ add, coalesced into addBulk; ${cpuNote(bullmq)}, plus Redis's own CPU: ${bullmq.extraUs.toFixed(0)} µs per request (every client of this Redis counted); target ≥ 0.5×`,
      })
    } else {
      console.warn(`Redis at ${new URL(redisUrl).host} is unreachable: the BullMQ row is left out`)
    }
  } finally {
    child.send('close')
    await new Promise((resolve) => child.once('exit', resolve))
    agent.destroy()
  }
  return results
}
