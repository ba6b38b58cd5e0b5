import { Writable } from 'node:stream'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  createLogger,
  EventBus,
  type KeyValueStore,
  type Listener,
  ListenerInProgressError,
  ListenersFailedError,
  MemoryKeyValueStore,
} from '../../src/core/index.ts'
import { describeEach, storeBackends, type TestStore } from './backends.ts'

interface Events {
  'message.received': { from: string; text: string }
  'status.updated': { id: string; status: 'sent' | 'delivered' }
}

function captureLogger() {
  const lines: Record<string, unknown>[] = []
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      callback()
    },
  })
  return { logger: createLogger({ level: 'info', destination }), lines }
}

class RecordMessage implements Listener<Events['message.received']> {
  readonly seen: Events['message.received'][] = []
  async handle(event: Events['message.received']) {
    this.seen.push(event)
  }
}

it('calls the listeners of an event type, in order, with the typed event', async () => {
  const bus = new EventBus<Events>()
  const order: string[] = []
  const record = new RecordMessage()
  bus.on('message.received', record)
  bus.on('message.received', (event) => void order.push(`fn:${event.text}`))
  bus.on('status.updated', (event) => void order.push(`status:${event.status}`))
  expect(await bus.emit('message.received', { from: '+1', text: 'hi' })).toEqual([])
  expect(record.seen).toEqual([{ from: '+1', text: 'hi' }])
  expect(order).toEqual(['fn:hi'])
  await bus.emit('status.updated', { id: 'm1', status: 'delivered' })
  expect(order).toEqual(['fn:hi', 'status:delivered'])
  // @ts-expect-error: the payload must match the event type.
  await bus.emit('status.updated', { id: 'm1', status: 'lost' })
})

it('emitting a type without listeners does nothing', async () => {
  const bus = new EventBus<Events>()
  expect(await bus.emit('status.updated', { id: 'x', status: 'sent' })).toEqual([])
})

it('names listeners by class or function, unique per type', () => {
  const bus = new EventBus<Events>()
  bus.on('message.received', new RecordMessage())
  bus.on('message.received', new RecordMessage())
  bus.on('message.received', async function notify() {})
  bus.on('message.received', async () => {}, 'custom')
  expect(bus.listenerNames('message.received')).toEqual([
    'RecordMessage',
    'RecordMessage#2',
    'notify',
    'custom',
  ])
})

it('a failing listener is logged, does not stop the others, and is returned', async () => {
  const { logger, lines } = captureLogger()
  const bus = new EventBus<Events>({ logger })
  const ran: string[] = []
  bus.on('message.received', () => void ran.push('first'), 'first')
  bus.on(
    'message.received',
    () => {
      throw new Error('listener exploded')
    },
    'broken',
  )
  bus.on(
    'message.received',
    async () => {
      await Promise.reject(new Error('async failure'))
    },
    'brokenAsync',
  )
  bus.on('message.received', () => void ran.push('last'), 'last')
  const failures = await bus.emit('message.received', { from: '+1', text: 'x' })
  expect(ran).toEqual(['first', 'last'])
  expect(failures.map((f) => [f.listener, (f.error as Error).message])).toEqual([
    ['broken', 'listener exploded'],
    ['brokenAsync', 'async failure'],
  ])
  const logged = lines.filter((l) => l.msg === 'event listener failed')
  expect(logged.map((l) => [l.listener, l.event])).toEqual([
    ['broken', 'message.received'],
    ['brokenAsync', 'message.received'],
  ])
  expect(logged[0]?.err).toMatchObject({ message: 'listener exploded' })
})

it('emitOrThrow throws ListenersFailedError after running every listener', async () => {
  const bus = new EventBus<Events>()
  const ran: string[] = []
  bus.on(
    'status.updated',
    () => {
      throw new Error('nope')
    },
    'broken',
  )
  bus.on('status.updated', () => void ran.push('after'), 'after')
  const error = await bus
    .emitOrThrow('status.updated', { id: '1', status: 'sent' })
    .catch((e: unknown) => e)
  expect(error).toBeInstanceOf(ListenersFailedError)
  expect((error as ListenersFailedError).failures.map((f) => f.listener)).toEqual(['broken'])
  expect((error as Error).message).toBe('1 listener(s) of status.updated failed: broken')
  expect(ran).toEqual(['after'])
  await expect(
    new EventBus<Events>().emitOrThrow('status.updated', { id: '1', status: 'sent' }),
  ).resolves.toBeUndefined()
})

it('without a store, an emission id does not skip anything', async () => {
  const bus = new EventBus<Events>()
  let calls = 0
  bus.on('status.updated', () => void calls++)
  await bus.emit('status.updated', { id: '1', status: 'sent' }, { id: 'e1' })
  await bus.emit('status.updated', { id: '1', status: 'sent' }, { id: 'e1' })
  expect(calls).toBe(2)
})

describeEach('EventBus emission ids', storeBackends, (backend) => {
  let t: TestStore
  let store: KeyValueStore

  beforeEach(async () => {
    t = await backend.create()
    store = t.store
  })
  afterEach(async () => {
    await t.cleanup()
  })

  it('re-emitting an id runs only the listeners that have not handled it yet', async () => {
    const bus = new EventBus<Events>({ store })
    const calls = { stable: 0, flaky: 0 }
    let flakyFails = true
    bus.on('message.received', () => void calls.stable++, 'stable')
    bus.on(
      'message.received',
      () => {
        calls.flaky++
        if (flakyFails) throw new Error('temporary')
      },
      'flaky',
    )
    const event = { from: '+1', text: 'hello' }
    expect(await bus.emit('message.received', event, { id: 'wamid-1' })).toHaveLength(1)
    expect(calls).toEqual({ stable: 1, flaky: 1 })
    flakyFails = false
    expect(await bus.emit('message.received', event, { id: 'wamid-1' })).toEqual([])
    expect(calls).toEqual({ stable: 1, flaky: 2 })
    // Everyone has handled it now: a third emission runs nothing.
    await bus.emit('message.received', event, { id: 'wamid-1' })
    expect(calls).toEqual({ stable: 1, flaky: 2 })
    // Another id, or no id, runs everyone.
    await bus.emit('message.received', event, { id: 'wamid-2' })
    await bus.emit('message.received', event)
    expect(calls).toEqual({ stable: 3, flaky: 4 })
  })

  it('a second bus on the same store (another worker) skips what the first handled', async () => {
    let calls = 0
    const first = new EventBus<Events>({ store }).on('status.updated', () => void calls++, 'count')
    const second = new EventBus<Events>({ store }).on('status.updated', () => void calls++, 'count')
    await first.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'status-a' })
    await second.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'status-a' })
    expect(calls).toBe(1)
  })

  it('the same id on different event types is independent', async () => {
    const bus = new EventBus<Events>({ store })
    let calls = 0
    bus.on('message.received', () => void calls++, 'count')
    bus.on('status.updated', () => void calls++, 'count')
    await bus.emit('message.received', { from: '+1', text: 'x' }, { id: 'same' })
    await bus.emit('status.updated', { id: 'x', status: 'sent' }, { id: 'same' })
    expect(calls).toBe(2)
  })

  it('forgets handled marks after handledTtlMs', async () => {
    const bus = new EventBus<Events>({ store, handledTtlMs: t.shortTtlMs })
    let calls = 0
    bus.on('status.updated', () => void calls++, 'count')
    await bus.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
    await t.pass(t.shortTtlMs * 3)
    await bus.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
    expect(calls).toBe(2)
  })
})

/** Every call passed on to `store`. */
function delegatingStore(store: KeyValueStore): KeyValueStore {
  return {
    get: (key) => store.get(key),
    set: (key, value, options) => store.set(key, value, options),
    setIfAbsent: (key, value, options) => store.setIfAbsent(key, value, options),
    take: (key) => store.take(key),
    delete: (key) => store.delete(key),
    deleteIf: (key, value) => store.deleteIf(key, value),
    replaceIf: (key, current, next, options) => store.replaceIf(key, current, next, options),
    increment: (key, by, options) => store.increment(key, by, options),
    close: () => store.close(),
  }
}

/** A store as a crashed worker leaves it: its writes never land (no renewal, no release). */
function crashedWorkerStore(store: KeyValueStore): KeyValueStore {
  return {
    ...delegatingStore(store),
    set: async () => {},
    delete: async () => {},
    deleteIf: async () => false,
    replaceIf: async () => true,
    close: async () => {},
  }
}

describeEach('EventBus concurrent deliveries of one emission', storeBackends, (backend) => {
  let t: TestStore

  beforeEach(async () => {
    t = await backend.create()
  })
  afterEach(async () => {
    await t.cleanup()
  })

  it('two concurrent emissions of one id run the listener once', async () => {
    let calls = 0
    const bus = new EventBus<Events>({ store: t.store })
    bus.on('status.updated', () => void calls++, 'count')
    const event = { id: 'wamid-1', status: 'delivered' } as const
    const results = await Promise.all([
      bus.emit('status.updated', event, { id: 'wamid-1:status:delivered' }),
      bus.emit('status.updated', event, { id: 'wamid-1:status:delivered' }),
    ])
    expect(calls).toBe(1)
    // The loser saw the winner's claim: it is "in progress" (a retry skips it) or handled.
    for (const failures of results) {
      for (const f of failures) expect(f.error).toBeInstanceOf(ListenerInProgressError)
    }
    expect(await bus.emit('status.updated', event, { id: 'wamid-1:status:delivered' })).toEqual([])
    expect(calls).toBe(1)
  })

  it('a redelivery while another worker runs the listener reports it in progress, and the retry skips it', async () => {
    let calls = 0
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    let finish!: () => void
    const gate = new Promise<void>((resolve) => (finish = resolve))
    const listener = async () => {
      calls++
      started()
      await gate
    }
    const first = new EventBus<Events>({ store: t.store }).on('status.updated', listener, 'slow')
    const second = new EventBus<Events>({ store: t.store }).on('status.updated', listener, 'slow')
    const event = { id: 'a', status: 'sent' } as const
    const firstRun = first.emit('status.updated', event, { id: 'a:status:sent' })
    await running
    const redelivered = await second.emit('status.updated', event, { id: 'a:status:sent' })
    expect(redelivered.map((f) => f.listener)).toEqual(['slow'])
    expect(redelivered[0]?.error).toBeInstanceOf(ListenerInProgressError)
    expect(calls).toBe(1)
    finish()
    expect(await firstRun).toEqual([])
    expect(await second.emit('status.updated', event, { id: 'a:status:sent' })).toEqual([])
    expect(calls).toBe(1)
  })

  it('a failed listener releases its claim, so the retry runs it', async () => {
    let calls = 0
    const bus = new EventBus<Events>({ store: t.store })
    bus.on(
      'status.updated',
      () => {
        calls++
        if (calls === 1) throw new Error('temporary')
      },
      'flaky',
    )
    const event = { id: 'a', status: 'sent' } as const
    expect(await bus.emit('status.updated', event, { id: 'e' })).toHaveLength(1)
    expect(await bus.emit('status.updated', event, { id: 'e' })).toEqual([])
    expect(calls).toBe(2)
  })

  it('a claim whose answer was lost (it landed all the same) is undone, so the retry runs the listener', async () => {
    let calls = 0
    // As a Redis that froze: the claim is written, but its answer comes after the client gave up.
    const unanswered: KeyValueStore = {
      ...delegatingStore(t.store),
      async setIfAbsent(key, value, options) {
        await t.store.setIfAbsent(key, value, options)
        throw new Error('Command timed out')
      },
    }
    const frozen = new EventBus<Events>({ store: unanswered })
    frozen.on('status.updated', () => void calls++, 'count')
    const event = { id: 'a', status: 'sent' } as const
    const failed = await frozen.emit('status.updated', event, { id: 'e' })
    expect(failed.map((f) => (f.error as Error).message)).toEqual(['Command timed out'])
    const retry = new EventBus<Events>({ store: t.store }).on(
      'status.updated',
      () => void calls++,
      'count',
    )
    expect(await retry.emit('status.updated', event, { id: 'e' })).toEqual([])
    expect(calls).toBe(1)
  })

  it("a crashed worker's claim expires after claimTtlMs and the retry runs the listener", async () => {
    let calls = 0
    const crashed = new EventBus<Events>({
      store: crashedWorkerStore(t.store),
      claimTtlMs: t.shortTtlMs,
    }).on('status.updated', () => new Promise<void>(() => void calls++), 'count')
    void crashed.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
    const retry = new EventBus<Events>({ store: t.store, claimTtlMs: t.shortTtlMs })
    retry.on('status.updated', () => void calls++, 'count')
    const early = await retry.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
    expect(early[0]?.error).toBeInstanceOf(ListenerInProgressError)
    await t.pass(t.shortTtlMs * 3)
    expect(await retry.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })).toEqual([])
    expect(calls).toBe(2)
  })
})

it('a slow listener renews its claim, so a redelivery never runs it alongside', async () => {
  const store = new MemoryKeyValueStore()
  let renewals = 0
  let enough!: () => void
  const renewed = new Promise<void>((resolve) => (enough = resolve))
  const counting: KeyValueStore = {
    ...delegatingStore(store),
    async replaceIf(key, current, next, options) {
      const renewed = await store.replaceIf(key, current, next, options)
      if (renewed && ++renewals === 4) enough()
      return renewed
    },
  }
  let calls = 0
  const claimTtlMs = 300
  const slow = new EventBus<Events>({ store: counting, claimTtlMs })
  slow.on('status.updated', () => renewed.then(() => void calls++), 'slow')
  const running = slow.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
  // Four renewals, a third of the claim's life apart: the first claim alone would be gone.
  await renewed
  const other = new EventBus<Events>({ store, claimTtlMs })
  other.on('status.updated', () => void calls++, 'slow')
  const redelivered = await other.emit('status.updated', { id: 'a', status: 'sent' }, { id: 'e' })
  expect(redelivered[0]?.error).toBeInstanceOf(ListenerInProgressError)
  expect(await running).toEqual([])
  expect(calls).toBe(1)
  expect(await store.get('event:status.updated:e:slow')).toBe('handled')
})
