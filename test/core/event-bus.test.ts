import { Writable } from 'node:stream'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  createLogger,
  EventBus,
  type KeyValueStore,
  type Listener,
  ListenersFailedError,
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
