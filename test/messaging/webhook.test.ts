import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  errorHandler,
  type JobHandlers,
  MemoryKeyValueStore,
  MemoryQueue,
  type Queue,
  silentLogger,
} from '../../src/core/index.ts'
import {
  createMessagingEventBus,
  type DeduplicationStore,
  MemoryDeduplicationStore,
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  messagingJobHandlers,
  messagingWebhook,
  PROCESS_MESSAGING_WEBHOOK,
  staticOwners,
} from '../../src/messaging/index.ts'
import { signWebhookBody } from '../../src/messaging/signature.ts'
import { describeEach, storeBackends } from '../core/backends.ts'
import {
  ACCESS_TOKEN,
  APP_SECRET,
  CUSTOMER,
  capturingLogger,
  fixtureBytes,
  fixtureJson,
  listen,
  OWNER,
  signatureOf,
  signedFixtures,
  testConfig,
  VERIFY_TOKEN,
} from './support.ts'

/** A queue that records what the webhook queued, without running anything. */
class RecordingQueue extends MemoryQueue {
  readonly jobs: { name: string; payload: unknown }[] = []
  down = false
  override async enqueue(name: string, payload: unknown, options?: { jobId?: string }) {
    if (this.down) throw new Error(`connect ECONNREFUSED 127.0.0.1:6379 (secret ${APP_SECRET})`)
    this.jobs.push({ name, payload })
    return super.enqueue(name, payload, options)
  }
}

function webhookApp(options: { queue: Queue; dedup?: DeduplicationStore; bodyLimit?: number }) {
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.route(
    '/',
    messagingWebhook({
      config: testConfig(),
      queue: options.queue,
      dedup: options.dedup ?? new MemoryDeduplicationStore(),
      logger: silentLogger(),
      bodyLimit: options.bodyLimit,
    }),
  )
  return app
}

/** A signed notification carrying the given `[id, text]` messages, one change each. */
function batchOf(...messages: [string, string][]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: messages.map(([id, body]) => ({
          field: 'messages',
          value: {
            messages: [
              { from: CUSTOMER, id, timestamp: '1763740800', text: { body }, type: 'text' },
            ],
          },
        })),
      },
    ],
  })
}

function post(
  app: Hono,
  body: Uint8Array<ArrayBuffer> | string,
  /** null sends no signature header at all. */
  signature: string | null = signWebhookBody(APP_SECRET, body),
) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (signature !== null) headers['x-hub-signature-256'] = signature
  return app.request('/messaging/webhook', { method: 'POST', headers, body })
}

describe('GET /messaging/webhook (subscription handshake)', () => {
  const handshake = fixtureJson<{
    request: { query: Record<string, string> }
    expectedResponse: { status: number; body: string }
    mismatchCases: { query: Record<string, string>; expectedStatus: number }[]
  }>('verify-get-request.json')
  const app = webhookApp({ queue: new MemoryQueue() })

  it('echoes hub.challenge as plain text when the verify token matches', async () => {
    const query = new URLSearchParams(handshake.request.query)
    const res = await app.request(`/messaging/webhook?${query}`)
    expect(res.status).toBe(handshake.expectedResponse.status)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(await res.text()).toBe(handshake.expectedResponse.body)
  })

  it.each(handshake.mismatchCases)(
    'answers 403 Forbidden for %j',
    async ({ query, expectedStatus }) => {
      const res = await app.request(`/messaging/webhook?${new URLSearchParams(query)}`)
      expect(res.status).toBe(expectedStatus)
      expect(await res.text()).toBe('Forbidden')
    },
  )

  it('answers 403 when the challenge is missing or the token differs only in length', async () => {
    const noChallenge = new URLSearchParams({
      'hub.mode': 'subscribe',
      'hub.verify_token': VERIFY_TOKEN,
    })
    expect((await app.request(`/messaging/webhook?${noChallenge}`)).status).toBe(403)
    const longer = new URLSearchParams({
      'hub.mode': 'subscribe',
      'hub.verify_token': `${VERIFY_TOKEN}x`,
      'hub.challenge': '1',
    })
    expect((await app.request(`/messaging/webhook?${longer}`)).status).toBe(403)
  })
})

describe('POST /messaging/webhook over HTTP: every fixture, signed by the provider', () => {
  const queue = new MemoryQueue({ logger: silentLogger() })
  const kv = new MemoryKeyValueStore()
  const texts: MessagingTextReceived[] = []
  const statuses: MessagingStatusUpdate[] = []
  const captured = capturingLogger()
  let server: { url: string; close(): Promise<void> }
  const queued: string[] = []

  beforeAll(async () => {
    const bus = createMessagingEventBus({ store: kv, logger: captured.logger })
    bus.on('MessagingTextReceived', (event) => void texts.push(event))
    bus.on('MessagingStatusUpdate', (event) => void statuses.push(event))
    const handlers = messagingJobHandlers({
      bus,
      isOwner: staticOwners([OWNER]),
      logger: captured.logger,
    })
    const recording: JobHandlers = {
      [PROCESS_MESSAGING_WEBHOOK]: async (payload, job) => {
        queued.push(payload.payload_json)
        await handlers[PROCESS_MESSAGING_WEBHOOK]?.(payload, job)
      },
    }
    queue.work(recording)
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({
        config: testConfig(),
        queue,
        dedup: new MemoryDeduplicationStore(),
        logger: captured.logger,
      }),
    )
    server = await listen(app)
  })
  afterAll(async () => {
    await server.close()
    await queue.close()
  })

  async function deliver(name: string) {
    const before = { texts: texts.length, statuses: statuses.length, queued: queued.length }
    const res = await fetch(`${server.url}/messaging/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(name) },
      body: fixtureBytes(name),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({ received: true })
    await queue.drain()
    expect(queued.slice(before.queued)).toEqual([fixtureBytes(name).toString('utf8')])
    return { texts: texts.slice(before.texts), statuses: statuses.slice(before.statuses) }
  }

  it('has a signature for every webhook fixture', () => {
    expect(signedFixtures.map((f) => f.name).sort()).toEqual([
      'inbound-image-ignored.json',
      'inbound-text-bsuid-only.json',
      'inbound-text-customer.json',
      'inbound-text-owner.json',
      'inbound-text-parent-bsuid.json',
      'inbound-text-phone-and-bsuid.json',
      'inbound-text-username.json',
      'inbound-unsupported-type.json',
      'status-delivered-bsuid.json',
      'status-delivered.json',
      'status-failed-bsuid.json',
      'status-failed.json',
      'status-read-phone-and-bsuid.json',
      'status-read.json',
      'status-sent.json',
      'unknown-field-template-status.json',
    ])
  })

  it('inbound-text-customer.json: one MessagingTextReceived from Customer(12025550143)', async () => {
    const { texts: got, statuses: none } = await deliver('inbound-text-customer.json')
    expect(none).toEqual([])
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({
      wamid: 'wamid.HBgLMTIwMjU1NTAxNDMVAgASGBRGQUtFMDAwMDAwMDAwMDAwMDAw01AA==',
      sender_identity: { kind: 'Customer', phone: CUSTOMER },
      text: 'Hi, do you have the blue one in stock?',
    })
    expect(got[0]?.timestamp).toEqual(new Date(1763740800 * 1000))
    expect(got[0]?.timestamp.toISOString()).toBe('2025-11-21T16:00:00.000Z')
    expect(got[0]?.raw).toEqual(fixtureJson('inbound-text-customer.json'))
  })

  it('inbound-text-owner.json: one MessagingTextReceived from Owner(12025550199)', async () => {
    const { texts: got } = await deliver('inbound-text-owner.json')
    expect(got).toHaveLength(1)
    expect(got[0]?.sender_identity).toEqual({ kind: 'Owner', phone: OWNER })
    expect(got[0]?.text).toBe('status')
  })

  it.each([
    ['status-sent.json', 'Sent', 1763741040],
    ['status-delivered.json', 'Delivered', 1763741042],
    ['status-read.json', 'Read', 1763741100],
  ])('%s: one MessagingStatusUpdate (%s)', async (name, status, seconds) => {
    const { texts: none, statuses: got } = await deliver(name)
    expect(none).toEqual([])
    expect(got).toEqual([
      {
        wamid: 'wamid.HBgLMTIwMjU1NTAxNDMVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDEA',
        status,
        timestamp: new Date(seconds * 1000),
        recipient: CUSTOMER,
        errors: [],
      },
    ])
  })

  it("status-failed.json: Failed, carrying the provider's error 131047", async () => {
    const { statuses: got } = await deliver('status-failed.json')
    expect(got).toHaveLength(1)
    expect(got[0]?.status).toBe('Failed')
    expect(got[0]?.errors).toEqual([
      {
        code: 131047,
        title: 'Re-engagement message',
        message: 'Re-engagement message',
        details:
          'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
      },
    ])
  })

  it.each([
    ['inbound-image-ignored.json', 'only text messages are supported'],
    ['inbound-unsupported-type.json', 'only text messages are supported'],
    ['unknown-field-template-status.json', 'not a messages change'],
  ])('%s: 200, no event, logged', async (name, logged) => {
    const { texts: a, statuses: b } = await deliver(name)
    expect(a).toEqual([])
    expect(b).toEqual([])
    expect(captured.text()).toContain(logged)
  })

  it('never writes a secret to the logs', () => {
    for (const secret of [APP_SECRET, ACCESS_TOKEN, VERIFY_TOKEN]) {
      expect(captured.text()).not.toContain(secret)
    }
  })
})

describe('POST /messaging/webhook: rejections change nothing', () => {
  const name = 'status-failed.json'
  const body = fixtureBytes(name)

  it('wrong signature: 401 Invalid signature, nothing queued', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    const res = await post(app, body, signWebhookBody('another_app_secret', body))
    expect(res.status).toBe(401)
    expect(await res.text()).toBe('Invalid signature')
    expect(queue.jobs).toEqual([])
  })

  it('missing or malformed header: 401', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    for (const header of [
      null,
      '',
      'sha256=',
      'sha1=abc',
      signatureOf(name).slice(7),
      `${signatureOf(name)}00`,
    ]) {
      const res = await post(app, body, header)
      expect(res.status).toBe(401)
      expect(await res.text()).toBe('Invalid signature')
    }
    expect(queue.jobs).toEqual([])
  })

  it('a body changed by one byte does not pass with the original signature', async () => {
    const queue = new RecordingQueue()
    const tampered = Buffer.from(body)
    tampered[tampered.length - 3] = 0x20
    const res = await post(webhookApp({ queue }), tampered, signatureOf(name))
    expect(res.status).toBe(401)
    expect(queue.jobs).toEqual([])
  })

  it('the parsed and re-serialized body fails with the signature of the raw bytes', async () => {
    const queue = new RecordingQueue()
    const reserialized = JSON.stringify(JSON.parse(body.toString('utf8')))
    expect(Buffer.from(reserialized).equals(body)).toBe(false) // the provider escapes "/" as "\/"
    const res = await post(webhookApp({ queue }), reserialized, signatureOf(name))
    expect(res.status).toBe(401)
    expect(queue.jobs).toEqual([])
  })

  it('invalid JSON with a good signature: 400 text Invalid JSON', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    for (const bad of ['{"entry":[', '', 'not json', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const res = await post(app, bad)
      expect(res.status).toBe(400)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
      expect(await res.text()).toBe('Invalid JSON')
    }
    expect(queue.jobs).toEqual([])
  })

  it('a body over the limit: 413 before the signature is checked', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    const big = `{"entry":[],"pad":"${'x'.repeat(1024 * 1024)}"}`
    const res = await post(app, big)
    expect(res.status).toBe(413)
    expect(queue.jobs).toEqual([])
    // Just under the limit is accepted.
    const fits = `{"pad":"${'x'.repeat(1024 * 1024 - 12)}"}`
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(1024 * 1024)
    expect((await post(app, fits)).status).toBe(200)
  })

  it('a chunked body over the limit (no Content-Length) over HTTP: 413', async () => {
    const queue = new RecordingQueue()
    const server = await listen(webhookApp({ queue, bodyLimit: 64 * 1024 }))
    try {
      const chunk = new Uint8Array(16 * 1024).fill(0x20)
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 8) controller.enqueue(chunk)
          else controller.close()
        },
      })
      const res = await fetch(`${server.url}/messaging/webhook`, {
        method: 'POST',
        headers: { 'x-hub-signature-256': 'sha256=00' },
        body: stream,
        duplex: 'half',
      } as RequestInit)
      expect(res.status).toBe(413)
      expect(queue.jobs).toEqual([])
    } finally {
      await server.close()
    }
  })
})

describe('POST /messaging/webhook: deduplication and queue failures', () => {
  const name = 'inbound-text-customer.json'
  const body = fixtureBytes(name)

  it('a duplicate id is acknowledged 200 and not queued again', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    for (let i = 0; i < 3; i++) {
      const res = await post(app, body, signatureOf(name))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ received: true })
    }
    expect(queue.jobs).toHaveLength(1)
    expect(queue.jobs[0]).toEqual({
      name: 'ProcessMessagingWebhook',
      payload: { payload_json: body.toString('utf8') },
    })
  })

  it('concurrent duplicates queue one job', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => post(app, body, signatureOf(name))),
    )
    expect(answers.map((r) => r.status)).toEqual(Array(25).fill(200))
    expect(queue.jobs).toHaveLength(1)
  })

  it('statuses carry no message id: every delivery is queued (the job is idempotent)', async () => {
    const queue = new RecordingQueue()
    const app = webhookApp({ queue })
    await post(app, fixtureBytes('status-read.json'), signatureOf('status-read.json'))
    await post(app, fixtureBytes('status-read.json'), signatureOf('status-read.json'))
    expect(queue.jobs).toHaveLength(2)
  })

  it('queue down: 500 "Queue error: <detail>" without secrets; the retry is queued and processed once', async () => {
    const queue = new RecordingQueue({ logger: silentLogger() })
    const kv = new MemoryKeyValueStore()
    const texts: MessagingTextReceived[] = []
    const bus = createMessagingEventBus({ store: kv })
    bus.on('MessagingTextReceived', (event) => void texts.push(event))
    queue.work(messagingJobHandlers({ bus, isOwner: staticOwners([OWNER]) }))
    const captured = capturingLogger()
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({
        config: testConfig(),
        queue,
        dedup: new MemoryDeduplicationStore(),
        logger: captured.logger,
      }),
    )

    queue.down = true
    const failed = await post(app, body, signatureOf(name))
    expect(failed.status).toBe(500)
    expect(failed.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await failed.text()
    expect(text).toBe('Queue error: connect ECONNREFUSED 127.0.0.1:6379 (secret <redacted>)')
    expect(captured.text()).toContain('Queue error')
    expect(captured.text()).not.toContain(APP_SECRET)

    queue.down = false
    const retried = await post(app, body, signatureOf(name))
    expect(retried.status).toBe(200)
    const again = await post(app, body, signatureOf(name))
    expect(again.status).toBe(200)
    await queue.drain()
    expect(queue.jobs).toHaveLength(1)
    expect(texts.map((t) => t.wamid)).toEqual([
      'wamid.HBgLMTIwMjU1NTAxNDMVAgASGBRGQUtFMDAwMDAwMDAwMDAwMDAw01AA==',
    ])
    await queue.close()
  })

  it('a batch whose first message was seen but which carries a new one is queued, and only the new one is handled', async () => {
    const queue = new RecordingQueue({ logger: silentLogger() })
    const bus = createMessagingEventBus({ store: new MemoryKeyValueStore() })
    const texts: string[] = []
    bus.on('MessagingTextReceived', (event) => void texts.push(event.text))
    queue.work(messagingJobHandlers({ bus, isOwner: staticOwners([OWNER]) }))
    const app = webhookApp({ queue })
    expect((await post(app, batchOf(['wamid.A', 'a']))).status).toBe(200)
    await queue.drain()
    // A redelivery of A batched with a new B (in another change): B must not be dropped.
    const res = await post(app, batchOf(['wamid.A', 'a'], ['wamid.B', 'b']))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ received: true })
    await queue.drain()
    expect(queue.jobs).toHaveLength(2)
    expect(texts).toEqual(['a', 'b'])
    // Every id of this batch is seen now: the spec's fast path acknowledges without queuing.
    expect((await post(app, batchOf(['wamid.B', 'b'], ['wamid.A', 'a']))).status).toBe(200)
    expect(queue.jobs).toHaveLength(2)
    await queue.close()
  })

  it('queue down: only the ids this delivery marked are released', async () => {
    const queue = new RecordingQueue()
    const dedup = new MemoryDeduplicationStore()
    const app = webhookApp({ queue, dedup })
    await post(app, batchOf(['wamid.A', 'a']))
    queue.down = true
    expect((await post(app, batchOf(['wamid.A', 'a'], ['wamid.B', 'b']))).status).toBe(500)
    expect(await dedup.checkAndInsert('wamid.A')).toBe(true)
    expect(await dedup.checkAndInsert('wamid.B')).toBe(false)
  })

  it('a failing dedup store does not block delivery: the message is queued', async () => {
    const queue = new RecordingQueue()
    const broken: DeduplicationStore = {
      checkAndInsert: () => Promise.reject(new Error('dedup store unreachable')),
      release: () => Promise.resolve(),
    }
    const res = await post(webhookApp({ queue, dedup: broken }), body, signatureOf(name))
    expect(res.status).toBe(200)
    expect(queue.jobs).toHaveLength(1)
  })
})

describe('messagingWebhook factory', () => {
  it('throws at start-up without config, queue or dedup', () => {
    expect(() =>
      messagingWebhook({
        config: testConfig(),
        queue: undefined as unknown as Queue,
        dedup: new MemoryDeduplicationStore(),
      }),
    ).toThrow(TypeError)
  })

  it('mounts on another path when asked', async () => {
    const queue = new RecordingQueue()
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({
        config: testConfig(),
        queue,
        dedup: new MemoryDeduplicationStore(),
        path: '/hooks/wa',
      }),
    )
    const body = fixtureBytes('status-sent.json')
    const res = await app.request('/hooks/wa', {
      method: 'POST',
      headers: { 'x-hub-signature-256': signatureOf('status-sent.json') },
      body,
    })
    expect(res.status).toBe(200)
    expect(queue.jobs).toHaveLength(1)
  })
})

describeEach('a status delivered twice concurrently', storeBackends, (backend) => {
  it('runs its listener once: the bus claims each listener before running it', async () => {
    const t = await backend.create()
    const queue = new MemoryQueue({ retry: { attempts: 5, backoffMs: 1 }, logger: silentLogger() })
    const bus = createMessagingEventBus({ store: t.store, logger: silentLogger() })
    const statuses: MessagingStatusUpdate[] = []
    bus.on('MessagingStatusUpdate', async function recordStatus(event) {
      // A listener that awaits (a database write, say) leaves room for the other delivery.
      await new Promise((resolve) => setTimeout(resolve, 5))
      statuses.push(event)
    })
    queue.work(messagingJobHandlers({ bus, isOwner: staticOwners([OWNER]) }), { concurrency: 2 })
    const app = webhookApp({ queue })
    const name = 'status-delivered.json'
    const answers = await Promise.all([
      post(app, fixtureBytes(name), signatureOf(name)),
      post(app, fixtureBytes(name), signatureOf(name)),
    ])
    expect(answers.map((r) => r.status)).toEqual([200, 200])
    await queue.drain()
    expect(statuses.map((s) => s.status)).toEqual(['Delivered'])
    expect(await queue.failed()).toEqual([])
    await queue.close()
    await t.cleanup()
  })
})
