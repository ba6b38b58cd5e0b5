import { Writable } from 'node:stream'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createLogger, EventBus } from '../../src/core/index.ts'
import { describeEach, sleep, storeBackends, type TestStore } from './backends.ts'

type Events = { 'status.updated': { id: string } }

const mark = 'event:status.updated:e:slow'

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

/** A listener held open until the test lets it go, succeeding or failing. */
function heldListener() {
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  let finish!: (error?: Error) => void
  const done = new Promise<Error | undefined>((resolve) => (finish = resolve))
  const listener = async () => {
    started()
    const error = await done
    if (error) throw error
  }
  return { listener, running, finish }
}

describeEach('A listener claim taken over by another delivery', storeBackends, (backend) => {
  let t: TestStore

  beforeEach(async () => {
    t = await backend.create()
  })
  afterEach(async () => {
    await t.cleanup()
  })

  async function takenOver(outcome: Error | undefined) {
    const claimTtlMs = 150
    const { logger, lines } = captureLogger()
    const held = heldListener()
    const bus = new EventBus<Events>({ store: t.store, claimTtlMs, logger })
    bus.on('status.updated', held.listener, 'slow')
    const run = bus.emit('status.updated', { id: 'a' }, { id: 'e' })
    await held.running
    // The claim expired unrenewed (the store was out of reach) and another instance claimed.
    await t.store.set(mark, 'running:other', { ttlMs: 60_000 })
    // Several renewal intervals (a third of the claim's life each).
    await sleep(claimTtlMs * 2)
    expect(await t.store.get(mark)).toBe('running:other')
    held.finish(outcome)
    return { failures: await run, lines }
  }

  it('a renewal that finds another claim never takes it back, and says so', async () => {
    const { failures, lines } = await takenOver(new Error('temporary'))
    expect(failures.map((f) => f.listener)).toEqual(['slow'])
    // The failed listener released nothing: the claim is the other delivery's.
    expect(await t.store.get(mark)).toBe('running:other')
    const lost = lines.filter((line) => line.msg === 'event listener claim lost')
    expect(lost).toHaveLength(1)
    expect(lost[0]).toMatchObject({ event: 'status.updated', listener: 'slow' })
  })

  it('a listener that succeeded after losing its claim still marks the emission handled', async () => {
    const { failures } = await takenOver(undefined)
    expect(failures).toEqual([])
    expect(await t.store.get(mark)).toBe('handled')
  })
})
