/**
 * `npm run soak`: one demo instance as its own process on PostgreSQL and Redis, driven with mixed
 * traffic for SOAK_SECONDS (default 300):
 * - REST reads (one post, a page of posts) and writes (create, update, delete) with an API key;
 * - MCP requests with an OAuth bearer token (the token is validated on every request);
 * - signed messaging webhooks (a fresh message id each, so each is queued and processed).
 * Clients come from many addresses (`X-Forwarded-For`, the demo trusting one proxy) so the `api`
 * limit of 60 per minute per address is exercised without refusing most requests.
 *
 * Reports errors (any answer but 2xx and 429, and failed connections), p50/p99 latency per kind
 * and RSS of the demo process over time (from /proc/<pid>/status), and checks that RSS after the
 * warm-up grows by less than 10%. Exits 1 when errors occurred or RSS grew too much.
 *
 * Environment: SOAK_SECONDS, SOAK_CONCURRENCY (default 16); PostgreSQL from
 * KILN_TEST_DATABASE_URL (a fresh database is created and dropped), Redis from
 * KILN_TEST_REDIS_URL or REDIS_URL (keys under a unique prefix, deleted afterwards).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac, randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { createServer } from 'node:net'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { generateApiKey } from '../src/api/index.ts'
import { systemClock } from '../src/core/clock.ts'
import { RedisConnections, RedisKeyValueStore } from '../src/core/index.ts'
import { signAccessToken } from '../src/oauth/protocol/access-token.ts'
import { GrantIndex } from '../src/oauth/store/grants.ts'
import { serverNodeFlags } from './http/index.ts'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300)
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16)
const SAMPLE_MS = 5_000
const POSTS = 10_000
const ADDRESSES = 4_000
const APP_SECRET = `soak-app-secret-${randomBytes(8).toString('hex')}`
const TOKEN_SECRET = randomBytes(32).toString('hex')

type Kind = 'rest read' | 'rest write' | 'mcp (bearer)' | 'webhook'

interface Sample {
  at: number
  rssMiB: number
  requests: number
}

async function main(): Promise<number> {
  if (!Number.isFinite(SECONDS) || SECONDS < 10) throw new TypeError('SOAK_SECONDS must be ≥ 10')
  const adminUrl =
    process.env.KILN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
  const redisUrl =
    process.env.KILN_TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379'
  const name = `kiln_soak_${randomBytes(4).toString('hex')}`
  const prefix = `kiln-soak-${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  pool.on('error', () => {})
  try {
    const started = performance.now()
    child = spawn(
      process.execPath,
      [
        ...serverNodeFlags(),
        '--import',
        'tsx',
        fileURLToPath(new URL('../examples/demo/src/main.ts', import.meta.url)),
      ],
      {
        env: {
          ...process.env,
          NODE_ENV: 'development',
          PORT: String(port),
          APP_URL: origin,
          DATABASE_URL: databaseUrl,
          REDIS_URL: redisUrl,
          REDIS_PREFIX: prefix,
          // The web process also works the queue, so webhooks are processed during the soak.
          WORKER: 'inline',
          TRUST_PROXY: 'true',
          LOG_LEVEL: 'warn',
          MCP_TOKEN_SECRET: TOKEN_SECRET,
          DEMO_PASSWORD: 'soak-demo-password',
          MSG_APP_SECRET: APP_SECRET,
          MSG_ACCESS_TOKEN: `soak-access-${randomBytes(8).toString('hex')}`,
          MSG_PHONE_NUMBER_ID: '100000000000001',
          MSG_VERIFY_TOKEN: `soak-verify-${randomBytes(8).toString('hex')}`,
          MSG_GRAPH_API_URL: 'http://127.0.0.1:9',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
    const demo = child
    await waitUntil(async () => {
      if (demo.exitCode !== null) throw new Error(`the demo exited with ${demo.exitCode}`)
      return fetch(`${origin}/health`).then(
        (r) => r.ok,
        () => false,
      )
    }, 120_000)
    console.log(`demo up after ${((performance.now() - started) / 1000).toFixed(1)} s`)

    // A key, and posts to read, straight into the demo's (migrated) database.
    const key = generateApiKey('test')
    await pool.query(
      `INSERT INTO api_keys (name, prefix, hashed_key, scopes) VALUES ('soak', $1, $2, '["*"]')`,
      [key.prefix, key.hashedKey],
    )
    // bigserial ids arrive from pg as strings.
    const found = (await pool.query<{ id: string }>('SELECT id FROM users ORDER BY id LIMIT 1'))
      .rows[0]
    if (found === undefined) throw new Error('the demo has no user')
    const author = Number(found.id)
    await pool.query(
      `INSERT INTO posts (title, body, published, token_count, author_id)
       SELECT 'Post ' || n, repeat('lorem ipsum ', 20), n % 2 = 0, n % 1000, $1
       FROM generate_series(1, ${POSTS}) AS n`,
      [author],
    )
    const now = Math.floor(Date.now() / 1000)
    const token = await signAccessToken(
      {
        sub: String(author),
        client_id: 'soak-client',
        grant_id: 'bench-grant',
        scope: 'mcp',
        aud: `${origin}/mcp`,
        iss: origin,
        iat: now,
        exp: now + 3 * 3600,
        jti: randomUUID(),
      },
      new TextEncoder().encode(TOKEN_SECRET),
    )

    // The grant the token names, as an approval would have listed it: the bearer check ends
    // tokens whose grant is gone (deleted user, changed password, revoked in connected apps).
    await recordGrant(redisUrl, prefix, String(author))

    const traffic = new Traffic(port, key.rawKey, token, author)
    const pid = demo.pid as number
    const samples: Sample[] = []
    const t0 = performance.now()
    const sample = () =>
      samples.push({
        at: (performance.now() - t0) / 1000,
        rssMiB: rssMiB(pid),
        requests: traffic.total,
      })
    sample()
    const timer = setInterval(sample, SAMPLE_MS)
    const deadline = t0 + SECONDS * 1000
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < deadline) await traffic.next()
      }),
    )
    clearInterval(timer)
    sample()
    traffic.agent.destroy()
    return report(traffic, samples)
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    await pool.end()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
    await deleteKeys(redisUrl, prefix)
  }
}

/** One request of the mix at a time; counts statuses and latencies per kind. */
class Traffic {
  readonly agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  readonly latencies = new Map<Kind, number[]>()
  readonly statuses = new Map<string, number>()
  readonly errors: string[] = []
  total = 0
  private counter = 0
  private readonly created: number[] = []

  constructor(
    private readonly port: number,
    private readonly apiKey: string,
    private readonly token: string,
    private readonly author: number,
  ) {}

  async next(): Promise<void> {
    const roll = Math.random()
    const address = `10.${(this.counter >> 16) & 255}.${Math.floor(Math.random() * 16)}.${Math.floor(Math.random() * (ADDRESSES / 16))}`
    this.counter++
    const rest = { authorization: `Bearer ${this.apiKey}`, 'x-forwarded-for': address }
    if (roll < 0.3) {
      const id = 1 + Math.floor(Math.random() * POSTS)
      await this.send('rest read', 'GET', `/api/v1/posts/${id}`, rest)
    } else if (roll < 0.45) {
      const page = 1 + Math.floor(Math.random() * 50)
      await this.send('rest read', 'GET', `/api/v1/posts?page=${page}&per_page=20`, rest)
    } else if (roll < 0.6) {
      const write = Math.random()
      const id = this.created.shift()
      if (id !== undefined && write < 0.35) {
        await this.send('rest write', 'PUT', `/api/v1/posts/${id}`, rest, {
          title: `Edited ${this.counter}`,
        })
        this.created.push(id)
      } else if (id !== undefined && write < 0.7) {
        await this.send('rest write', 'DELETE', `/api/v1/posts/${id}`, rest)
      } else {
        if (id !== undefined) this.created.push(id)
        const answer = (await this.send('rest write', 'POST', '/api/v1/posts', rest, {
          title: `Soak ${this.counter}`,
          body: 'written during the soak',
          author_id: this.author,
        })) as { data?: { id: number } } | undefined
        if (answer?.data) this.created.push(answer.data.id)
      }
    } else if (roll < 0.8) {
      await this.send(
        'mcp (bearer)',
        'POST',
        '/mcp',
        {
          authorization: `Bearer ${this.token}`,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        { jsonrpc: '2.0', id: this.counter, method: 'ping' },
      )
    } else {
      const id = `wamid.soak${randomBytes(8).toString('hex')}`
      const body = Buffer.from(
        `{"object":"whatsapp_business_account","entry":[{"id":"200000000000002","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"12025550100","phone_number_id":"100000000000001"},"contacts":[{"profile":{"name":"Ana Customer"},"wa_id":"12025550143"}],"messages":[{"from":"12025550143","id":"${id}","timestamp":"${Math.floor(Date.now() / 1000)}","text":{"body":"soak ${this.counter}"},"type":"text"}]},"field":"messages"}]}]}`,
      )
      const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`
      await this.send(
        'webhook',
        'POST',
        '/messaging/webhook',
        {
          'x-hub-signature-256': signature,
          'content-type': 'application/json',
          'x-forwarded-for': address,
        },
        body,
      )
    }
  }

  private async send(
    kind: Kind,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<unknown> {
    const payload =
      body === undefined
        ? undefined
        : Buffer.isBuffer(body)
          ? body
          : Buffer.from(JSON.stringify(body))
    const all =
      payload && !headers['content-type']
        ? { ...headers, 'content-type': 'application/json' }
        : headers
    const start = performance.now()
    try {
      const { status, text } = await this.exchange(method, path, all, payload)
      const ms = performance.now() - start
      this.total++
      let list = this.latencies.get(kind)
      if (!list) {
        list = []
        this.latencies.set(kind, list)
      }
      list.push(ms)
      const label = `${kind} ${status}`
      this.statuses.set(label, (this.statuses.get(label) ?? 0) + 1)
      if ((status < 200 || status >= 300) && status !== 429) {
        if (this.errors.length < 20)
          this.errors.push(`${method} ${path} → ${status} ${text.slice(0, 200)}`)
        return undefined
      }
      return text.startsWith('{') ? JSON.parse(text) : undefined
    } catch (error) {
      this.total++
      this.statuses.set(`${kind} failed`, (this.statuses.get(`${kind} failed`) ?? 0) + 1)
      if (this.errors.length < 20)
        this.errors.push(`${method} ${path}: ${(error as Error).message}`)
      return undefined
    }
  }

  private exchange(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    retried = false,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: this.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          )
          res.on('error', reject)
        },
      )
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection closed by the server just as it was reused: send again once.
        if (error.code === 'ECONNRESET' && !retried && req.reusedSocket) {
          this.exchange(method, path, headers, body, true).then(resolve, reject)
        } else reject(error)
      })
      req.end(body)
    })
  }

  get errorCount(): number {
    let count = 0
    for (const [label, n] of this.statuses) {
      const status = label.split(' ').at(-1) ?? ''
      if (status === 'failed' || (!status.startsWith('2') && status !== '429')) count += n
    }
    return count
  }
}

function report(traffic: Traffic, samples: Sample[]): number {
  const percentile = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  }
  const all = [...traffic.latencies.values()].flat()
  const duration = samples.at(-1)?.at ?? SECONDS
  console.log(
    `\n## Soak: ${SECONDS} s, ${CONCURRENCY} concurrent clients, load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}\n`,
  )
  console.log('| traffic | requests | p50 ms | p99 ms |\n|---|---:|---:|---:|')
  for (const [kind, values] of traffic.latencies) {
    console.log(
      `| ${kind} | ${values.length.toLocaleString('en-US')} | ${percentile(values, 50).toFixed(1)} | ${percentile(values, 99).toFixed(1)} |`,
    )
  }
  console.log(
    `| all | ${all.length.toLocaleString('en-US')} (${(all.length / duration).toFixed(0)}/s) | ${percentile(all, 50).toFixed(1)} | ${percentile(all, 99).toFixed(1)} |`,
  )
  console.log('\nStatuses:', [...traffic.statuses].map(([k, v]) => `${k}: ${v}`).join(', '))
  console.log(`Errors (not 2xx or 429): ${traffic.errorCount}`)
  for (const error of traffic.errors) console.log(`  ${error}`)

  // RSS: the first fifth of the run (at least 30 s) is warm-up.
  const warmUp = Math.max(30, duration / 5)
  const after = samples.filter((s) => s.at >= warmUp)
  // RSS saws up and down with garbage collection: compare the means of the first and the last
  // fifth of the samples after the warm-up (at least three each).
  const window = Math.max(3, Math.floor(after.length / 5))
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)
  const base = mean(after.slice(0, window).map((s) => s.rssMiB))
  const end = mean(after.slice(-window).map((s) => s.rssMiB))
  const peak = Math.max(...after.map((s) => s.rssMiB))
  const growth = base > 0 ? end / base - 1 : 0
  console.log('\nRSS of the demo process over time:\n')
  console.log('| s | RSS MiB | requests so far |\n|---:|---:|---:|')
  const step = Math.max(1, Math.round(samples.length / 20))
  samples.forEach((s, i) => {
    if (i % step === 0 || i === samples.length - 1) {
      console.log(
        `| ${s.at.toFixed(0)} | ${s.rssMiB.toFixed(0)} | ${s.requests.toLocaleString('en-US')} |`,
      )
    }
  })
  console.log(
    `\nRSS after warm-up (${warmUp.toFixed(0)} s), mean of the first and last ${window} samples: ${base.toFixed(0)} MiB → ${end.toFixed(0)} MiB (peak ${peak.toFixed(0)} MiB): ${(growth * 100).toFixed(1)}% (limit 10%)`,
  )
  const ok = traffic.errorCount === 0 && growth < 0.1
  console.log(ok ? 'PASS' : 'FAIL')
  return ok ? 0 : 1
}

function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error('the demo did not answer /health in time')
}

async function recordGrant(redisUrl: string, prefix: string, userId: string): Promise<void> {
  const connections = new RedisConnections(redisUrl)
  try {
    const store = new RedisKeyValueStore(connections.connect(), { prefix: `${prefix}:` })
    await new GrantIndex(store, systemClock).add(
      {
        grantId: 'bench-grant',
        userId,
        tenantId: undefined,
        clientId: 'soak-client',
        clientName: 'soak',
        verifiedHost: undefined,
        scope: ['mcp'],
      },
      3 * 3600_000,
    )
  } finally {
    await connections.close()
  }
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const connections = new RedisConnections(redisUrl)
  try {
    const redis = connections.connect()
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    await connections.close()
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
