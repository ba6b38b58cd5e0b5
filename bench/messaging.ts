/**
 * Webhook acknowledgements per second, out of process: kiln's `POST /messaging/webhook` with
 * BullMQ and the Redis dedup store (bench/servers/webhook-kiln.ts) beside three hand-written
 * handlers (bench/servers/webhook-floor.ts): HMAC + parse only on node:http (the floor), the same
 * as one Hono route on @hono/node-server (what the framework kiln is served on costs by itself),
 * and HMAC + parse + BullMQ `add` on node:http (the obvious handler). Each server is its own
 * child process; wrk sends signed WhatsApp-shaped notifications in interleaved rounds:
 *
 * - status notifications (no message id: always queued), 1,000 distinct bodies replayed;
 * - inbound text messages, each with a message id never sent before (dedup never short-cuts).
 *
 * `KILN_BENCH_BEFORE=<git ref>` adds kiln's webhook as it was at that commit (checked out into a
 * temporary directory, run with this checkout's node_modules and bench/): before and after in
 * the same rounds.
 *
 * `npm run bench -- messaging` (`--quick`: one short round). Needs wrk and Redis (REDIS_URL).
 */
import { createHmac, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import {
  formatRatios,
  type HttpRequest,
  ratio,
  roundsFromEnv,
  runRounds,
  type ServerProcess,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { checkoutBefore } from './rest-api.ts'

const SECRET = 'bench_app_secret_not_a_real_one'
/** Fresh messages made per second of a burst: above what any side answers here. */
const UNIQUE_PER_SECOND = 60_000

/** The floor's handler as a Hono route: the framework's own share of kiln's cost. */
const HONO_FLOOR = 'HMAC + parse only, on Hono'

const runId = randomBytes(4).toString('hex')
let counter = 0

function signed(body: string): HttpRequest {
  return {
    method: 'POST',
    path: '/messaging/webhook',
    headers: {
      'Content-Type': 'application/json',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
    body,
  }
}

const wamid = () => `wamid.bench${runId}${(counter++).toString(36).padStart(10, '0')}`

/** An inbound text message (the fixture's shape) with a message id never used before. */
function textMessage(): HttpRequest {
  return signed(
    `{"object":"whatsapp_business_account","entry":[{"id":"200000000000002","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"12025550100","phone_number_id":"100000000000001"},"contacts":[{"profile":{"name":"Ana Customer"},"wa_id":"12025550143"}],"messages":[{"from":"12025550143","id":"${wamid()}","timestamp":"1763740800","text":{"body":"Hi, do you have the blue one in stock?"},"type":"text"}]},"field":"messages"}]}]}`,
  )
}

/** A delivery status notification (the fixture's shape). */
function statusNotification(): HttpRequest {
  return signed(
    `{"object":"whatsapp_business_account","entry":[{"id":"200000000000002","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"12025550100","phone_number_id":"100000000000001"},"statuses":[{"id":"${wamid()}","status":"delivered","timestamp":"1763741042","recipient_id":"12025550143","conversation":{"id":"c0ffee00000000000000000000000001","origin":{"type":"utility"}},"pricing":{"billable":true,"pricing_model":"PMP","category":"utility","type":"regular"}}]},"field":"messages"}]}]}`,
  )
}

/** Redis's own CPU time so far (`INFO cpu`), µs: every client of that Redis counts. */
async function redisCpu(redisUrl: string): Promise<(() => Promise<number>) & { close(): void }> {
  const { Redis } = await import('ioredis')
  const redis = new Redis(redisUrl, { lazyConnect: true })
  await redis.connect()
  const probe = async () => {
    const info = await redis.info('cpu')
    const seconds = (name: string) =>
      Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0)
    return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6
  }
  return Object.assign(probe, { close: () => redis.disconnect() })
}

export default async function run({ quick }: BenchOptions): Promise<string> {
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
  const options = roundsFromEnv(quick)
  const env = { KILN_BENCH_SECRET: SECRET, REDIS_URL: redisUrl }
  const servers = await Promise.all([
    startServer<{ port: number }>(new URL('./servers/webhook-floor.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/webhook-floor.ts', import.meta.url), {
      env: { ...env, KILN_BENCH_WEBHOOK: 'bullmq' },
    }),
    startServer<{ port: number }>(new URL('./servers/webhook-kiln.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/webhook-floor.ts', import.meta.url), {
      env: { ...env, KILN_BENCH_WEBHOOK: 'hono' },
    }),
  ])
  const [floor, handWritten, kiln, honoFloor] = servers
  const beforeRef = process.env.KILN_BENCH_BEFORE
  const before = beforeRef ? checkoutBefore(beforeRef) : undefined
  const beforeLabel = `kiln (BullMQ) at ${beforeRef}`
  // From its own directory, so that its imports resolve to that commit's src/.
  const kilnBefore = before
    ? await startServer<{ port: number }>(join(before.dir, 'bench/servers/webhook-kiln.ts'), {
        env,
        cwd: before.dir,
      })
    : undefined
  if (kilnBefore) servers.push(kilnBefore)
  const probe = await redisCpu(redisUrl)
  const statuses = Array.from({ length: 1_000 }, statusNotification)
  const fresh = () =>
    Array.from({ length: UNIQUE_PER_SECOND * (options.seconds ?? 5) }, textMessage)
  const sides: Array<[string, ServerProcess<{ port: number }> | undefined]> = [
    ['kiln (BullMQ)', kiln],
    ['hand-written HMAC + BullMQ add', handWritten],
    ['HMAC + parse only (floor)', floor],
    [HONO_FLOOR, honoFloor],
  ]
  if (kilnBefore) sides.push([beforeLabel, kilnBefore])
  try {
    if (!floor || !handWritten || !kiln || !honoFloor)
      throw new Error('a webhook server did not start')
    const cpuProbes = { 'µs Redis': probe }
    const status = await runRounds(
      sides.map(([label, server]) => ({
        label: `${label}, status`,
        origin: `http://127.0.0.1:${server?.info.port}`,
        pid: server?.pid ?? 0,
        requests: statuses,
      })),
      { ...options, cpuProbes },
    )
    const text = await runRounds(
      sides.map(([label, server]) => ({
        label: `${label}, new message`,
        origin: `http://127.0.0.1:${server?.info.port}`,
        pid: server?.pid ?? 0,
        requests: fresh,
        unique: true,
      })),
      { ...options, cpuProbes },
    )
    const ratios = [
      ratio(status, 'kiln (BullMQ), status', 'HMAC + parse only (floor), status'),
      ratio(status, 'kiln (BullMQ), status', 'hand-written HMAC + BullMQ add, status'),
      ratio(status, 'hand-written HMAC + BullMQ add, status', 'HMAC + parse only (floor), status'),
      ratio(status, `${HONO_FLOOR}, status`, 'HMAC + parse only (floor), status'),
      ratio(status, 'kiln (BullMQ), status', `${HONO_FLOOR}, status`),
      ratio(text, 'kiln (BullMQ), new message', 'HMAC + parse only (floor), new message'),
      ratio(text, 'kiln (BullMQ), new message', 'hand-written HMAC + BullMQ add, new message'),
      ratio(
        text,
        'hand-written HMAC + BullMQ add, new message',
        'HMAC + parse only (floor), new message',
      ),
      ratio(text, `${HONO_FLOOR}, new message`, 'HMAC + parse only (floor), new message'),
      ratio(text, 'kiln (BullMQ), new message', `${HONO_FLOOR}, new message`),
    ]
    if (kilnBefore) {
      ratios.push(
        ratio(status, 'kiln (BullMQ), status', `${beforeLabel}, status`),
        ratio(text, 'kiln (BullMQ), new message', `${beforeLabel}, new message`),
      )
    }
    return formatRatios(ratios)
  } finally {
    probe.close()
    await Promise.all(servers.map((s) => s.stop()))
    before?.remove()
  }
}
