import { describe, expect, it } from 'vitest'
import {
  type JobContext,
  ListenersFailedError,
  MemoryKeyValueStore,
  MemoryQueue,
  UnrecoverableJobError,
} from '../../src/core/index.ts'
import {
  createMessagingEventBus,
  laterStatus,
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  messagingJobHandlers,
  PROCESS_MESSAGING_WEBHOOK,
  staticOwners,
} from '../../src/messaging/index.ts'
import { processMessagingWebhook } from '../../src/messaging/job.ts'
import { CUSTOMER, capturingLogger, fixtureBytes, OWNER } from './support.ts'

const job: JobContext = { id: '1', name: PROCESS_MESSAGING_WEBHOOK, attempt: 1 }
const isOwner = staticOwners([OWNER])

function text(id: string, from: string, body: string) {
  return { from, id, timestamp: '1763740800', text: { body }, type: 'text' }
}

/** A batched notification: two entries, several changes, messages and statuses. */
const batched = JSON.stringify({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '1',
      changes: [
        {
          field: 'messages',
          value: {
            messages: [text('wamid.1', CUSTOMER, 'one'), text('wamid.2', OWNER, 'two')],
            statuses: [
              { id: 'wamid.out', status: 'delivered', timestamp: '1763741042', future_field: 1 },
            ],
          },
        },
        { field: 'message_template_status_update', value: { event: 'APPROVED' } },
        {
          field: 'messages',
          value: { messages: [{ id: 'wamid.img', from: CUSTOMER, type: 'image', timestamp: '1' }] },
        },
      ],
    },
    {
      id: '2',
      changes: [
        {
          field: 'messages',
          value: {
            messages: [text('wamid.3', CUSTOMER, 'three'), { broken: true }],
            statuses: [
              { id: 'wamid.out', status: 'read', timestamp: '1763741100' },
              { id: 'wamid.x', status: 'deleted', timestamp: '1763741101' },
            ],
          },
        },
      ],
    },
    'not an entry',
  ],
})

function setup() {
  const kv = new MemoryKeyValueStore()
  const { logger, text: logs } = capturingLogger()
  const bus = createMessagingEventBus({ store: kv, logger })
  const texts: MessagingTextReceived[] = []
  const statuses: MessagingStatusUpdate[] = []
  bus.on('MessagingTextReceived', (e) => void texts.push(e))
  bus.on('MessagingStatusUpdate', (e) => void statuses.push(e))
  const handler = processMessagingWebhook({ bus, isOwner, logger })
  return { bus, kv, handler, texts, statuses, logs }
}

describe('ProcessMessagingWebhook', () => {
  it('walks every entry, change, message and status, not only the first', async () => {
    const { handler, texts, statuses, logs } = setup()
    await handler({ payload_json: batched }, job)
    expect(texts.map((t) => [t.wamid, t.sender_identity, t.text])).toEqual([
      ['wamid.1', { kind: 'Customer', phone: CUSTOMER }, 'one'],
      ['wamid.2', { kind: 'Owner', phone: OWNER }, 'two'],
      ['wamid.3', { kind: 'Customer', phone: CUSTOMER }, 'three'],
    ])
    expect(texts[0]?.raw).toEqual(JSON.parse(batched))
    expect(statuses.map((s) => [s.wamid, s.status])).toEqual([
      ['wamid.out', 'Delivered'],
      ['wamid.out', 'Read'],
      ['wamid.x', 'Unknown'],
    ])
    expect(logs()).toContain('only text messages are supported')
    expect(logs()).toContain('not a messages change')
    expect(logs()).toContain('webhook message without id or sender skipped')
  })

  it('is idempotent per message: running the same payload again re-runs no listener', async () => {
    const { handler, texts, statuses } = setup()
    await handler({ payload_json: batched }, job)
    await handler({ payload_json: batched }, { ...job, id: '2' })
    expect(texts).toHaveLength(3)
    expect(statuses).toHaveLength(3)
  })

  it('a listener failure throws ListenersFailedError; the retry re-runs only the failed listener', async () => {
    const { bus, handler, texts } = setup()
    let calls = 0
    bus.on('MessagingTextReceived', function flaky() {
      calls++
      if (calls === 1) throw new Error('crm is down')
    })
    const payload = { payload_json: fixtureBytes('inbound-text-customer.json').toString('utf8') }
    const error = await handler(payload, job).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ListenersFailedError)
    expect((error as ListenersFailedError).failures.map((f) => f.listener)).toEqual(['flaky'])
    expect(texts).toHaveLength(1)
    await handler(payload, { ...job, attempt: 2 })
    expect(calls).toBe(2)
    expect(texts).toHaveLength(1)
  })

  it('a listener running elsewhere postpones the job by a claim life, unless another one failed', async () => {
    const { bus, handler } = setup()
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    bus.on('MessagingTextReceived', async function slow() {
      started()
      await held
    })
    const payload = { payload_json: fixtureBytes('inbound-text-customer.json').toString('utf8') }
    const first = handler(payload, job)
    await running
    const busy = await handler(payload, { ...job, id: '2' }).catch((e: unknown) => e)
    expect(busy).toBeInstanceOf(ListenersFailedError)
    expect((busy as ListenersFailedError).postponeMs).toBe(30_000)
    bus.on('MessagingTextReceived', function broken() {
      throw new Error('crm is down')
    })
    const mixed = await handler(payload, { ...job, id: '3' }).catch((e: unknown) => e)
    expect((mixed as ListenersFailedError).failures.map((f) => f.listener)).toEqual([
      'slow',
      'broken',
    ])
    expect((mixed as ListenersFailedError).postponeMs).toBeUndefined()
    release()
    // The first delivery reaches the listener registered while it ran.
    await expect(first).rejects.toThrow(/broken/)
  })

  it('through the memory queue: a failing listener is retried by the queue policy, others run once', async () => {
    const kv = new MemoryKeyValueStore()
    const bus = createMessagingEventBus({ store: kv })
    const queue = new MemoryQueue({ retry: { attempts: 3, backoffMs: 1 } })
    const steady: string[] = []
    let flakyCalls = 0
    bus.on('MessagingTextReceived', (e) => void steady.push(e.wamid), 'steady')
    bus.on(
      'MessagingTextReceived',
      () => {
        if (++flakyCalls < 3) throw new Error('not yet')
      },
      'flaky',
    )
    queue.work(messagingJobHandlers({ bus, isOwner }))
    await queue.enqueue(PROCESS_MESSAGING_WEBHOOK, {
      payload_json: fixtureBytes('inbound-text-owner.json').toString('utf8'),
    })
    await queue.drain()
    expect(flakyCalls).toBe(3)
    expect(steady).toHaveLength(1)
    expect(await queue.failed()).toEqual([])
    await queue.close()
  })

  it('a listener that keeps failing ends in the failed jobs, with the error', async () => {
    const bus = createMessagingEventBus({ store: new MemoryKeyValueStore() })
    const queue = new MemoryQueue({ retry: { attempts: 2, backoffMs: 1 } })
    bus.on(
      'MessagingStatusUpdate',
      () => {
        throw new Error('always')
      },
      'broken',
    )
    queue.work(messagingJobHandlers({ bus, isOwner }))
    await queue.enqueue(PROCESS_MESSAGING_WEBHOOK, {
      payload_json: fixtureBytes('status-read.json').toString('utf8'),
    })
    await queue.drain()
    const failed = await queue.failed()
    expect(failed).toHaveLength(1)
    expect(failed[0]?.attempts).toBe(2)
    expect(failed[0]?.error).toContain('broken')
    await queue.close()
  })

  it('a payload that is not JSON fails at once: no retry can fix it', async () => {
    const { handler } = setup()
    await expect(handler({ payload_json: '{oops' }, job)).rejects.toBeInstanceOf(
      UnrecoverableJobError,
    )
    await expect(handler({} as { payload_json: string }, job)).rejects.toBeInstanceOf(
      UnrecoverableJobError,
    )
  })

  it('a timestamp no Date can hold is skipped and logged, never an Invalid Date', async () => {
    const { handler, texts, statuses, logs } = setup()
    const payload = JSON.stringify({
      entry: [
        {
          changes: [
            {
              field: 'messages',
              value: {
                messages: [
                  { ...text('wamid.far', CUSTOMER, 'far'), timestamp: '99999999999999999' },
                ],
                statuses: [{ id: 'wamid.far', status: 'read', timestamp: 1e300 }],
              },
            },
          ],
        },
      ],
    })
    await handler({ payload_json: payload }, job)
    expect([...texts, ...statuses]).toEqual([])
    expect(logs()).toContain('text message without body or timestamp skipped')
    expect(logs()).toContain('webhook status without timestamp skipped')
  })

  it('a payload without entries, or an unknown object, is skipped without an event', async () => {
    const { handler, texts, statuses } = setup()
    await handler({ payload_json: '{"object":"page"}' }, job)
    await handler({ payload_json: '42' }, job)
    expect([...texts, ...statuses]).toEqual([])
  })
})

describe('laterStatus: statuses never move backwards', () => {
  it('keeps read when a late delivered arrives, and moves forward otherwise', () => {
    expect(laterStatus('Read', 'Delivered')).toBe('Read')
    expect(laterStatus('Delivered', 'Read')).toBe('Read')
    expect(laterStatus('Sent', 'Delivered')).toBe('Delivered')
    expect(laterStatus(undefined, 'Sent')).toBe('Sent')
    expect(laterStatus('Read', 'Sent')).toBe('Read')
    expect(laterStatus('Sent', 'Failed')).toBe('Failed')
    expect(laterStatus('Failed', 'Delivered')).toBe('Failed')
    expect(laterStatus('Delivered', 'Unknown')).toBe('Delivered')
  })
})
