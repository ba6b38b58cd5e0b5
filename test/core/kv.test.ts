import { afterEach, beforeEach, expect, it } from 'vitest'
import type { KeyValueStore } from '../../src/core/index.ts'
import { databaseStoreBackends, describeEach, storeBackends, type TestStore } from './backends.ts'

describeEach('KeyValueStore contract', [...storeBackends, ...databaseStoreBackends], (backend) => {
  let t: TestStore
  let store: KeyValueStore

  beforeEach(async () => {
    t = await backend.create()
    store = t.store
  })
  afterEach(async () => {
    await t.cleanup()
  })

  it('gets what was set, and undefined for an absent key', async () => {
    expect(await store.get('missing')).toBeUndefined()
    await store.set('a', 'one')
    expect(await store.get('a')).toBe('one')
    await store.set('a', 'two')
    expect(await store.get('a')).toBe('two')
  })

  it('keeps strings exactly, including empty, unicode and JSON', async () => {
    const values = ['', 'é ü 日本 🙂', JSON.stringify({ a: [1, 'x'], b: null }), ' spaced ']
    for (const [i, value] of values.entries()) await store.set(`k${i}`, value)
    for (const [i, value] of values.entries()) expect(await store.get(`k${i}`)).toBe(value)
  })

  it('expires an entry after its TTL, and keeps one without a TTL', async () => {
    await store.set('short', 'v', { ttlMs: t.shortTtlMs })
    await store.set('long', 'v', { ttlMs: 60_000 })
    await store.set('forever', 'v')
    if (t.exact) {
      await t.pass(t.shortTtlMs - 1)
      expect(await store.get('short')).toBe('v')
    }
    await t.pass(t.shortTtlMs * 3)
    expect(await store.get('short')).toBeUndefined()
    expect(await store.get('long')).toBe('v')
    expect(await store.get('forever')).toBe('v')
  })

  it('replaces the TTL when a key is set again', async () => {
    await store.set('k', 'first', { ttlMs: t.shortTtlMs })
    await store.set('k', 'second')
    await t.pass(t.shortTtlMs * 3)
    expect(await store.get('k')).toBe('second')
  })

  it('setIfAbsent stores only when the key is absent', async () => {
    expect(await store.setIfAbsent('k', 'first')).toBe(true)
    expect(await store.setIfAbsent('k', 'second')).toBe(false)
    expect(await store.get('k')).toBe('first')
  })

  it('setIfAbsent succeeds again once the previous entry expired', async () => {
    expect(await store.setIfAbsent('k', 'first', { ttlMs: t.shortTtlMs })).toBe(true)
    await t.pass(t.shortTtlMs * 3)
    expect(await store.setIfAbsent('k', 'second', { ttlMs: 60_000 })).toBe(true)
    expect(await store.get('k')).toBe('second')
  })

  it('setIfAbsent: of many concurrent callers exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.setIfAbsent('race', `caller-${i}`)),
    )
    const winners = results.flatMap((won, i) => (won ? [i] : []))
    expect(winners).toHaveLength(1)
    expect(await store.get('race')).toBe(`caller-${winners[0]}`)
  })

  it('take returns the value once and deletes it', async () => {
    await store.set('code', 'abc')
    expect(await store.take('code')).toBe('abc')
    expect(await store.take('code')).toBeUndefined()
    expect(await store.get('code')).toBeUndefined()
    expect(await store.take('never-set')).toBeUndefined()
  })

  it('take: of 50 concurrent callers exactly one gets the value', async () => {
    for (let round = 0; round < 5; round++) {
      await store.set('once', `value-${round}`)
      const results = await Promise.all(Array.from({ length: 50 }, () => store.take('once')))
      expect(results.filter((r) => r !== undefined)).toEqual([`value-${round}`])
    }
  })

  it('take does not return an expired value', async () => {
    await store.set('code', 'abc', { ttlMs: t.shortTtlMs })
    await t.pass(t.shortTtlMs * 3)
    expect(await store.take('code')).toBeUndefined()
  })

  it('delete removes a key, and deleting an absent key is fine', async () => {
    await store.set('k', 'v')
    await store.delete('k')
    expect(await store.get('k')).toBeUndefined()
    await store.delete('k')
    expect(await store.setIfAbsent('k', 'again')).toBe(true)
  })

  it('deleteIf deletes only while the key holds the value', async () => {
    await store.set('claim', 'mine')
    expect(await store.deleteIf('claim', 'theirs')).toBe(false)
    expect(await store.get('claim')).toBe('mine')
    expect(await store.deleteIf('claim', 'mine')).toBe(true)
    expect(await store.get('claim')).toBeUndefined()
    expect(await store.deleteIf('claim', 'mine')).toBe(false)
    await store.set('gone', 'mine', { ttlMs: t.shortTtlMs })
    await t.pass(t.shortTtlMs * 3)
    expect(await store.deleteIf('gone', 'mine')).toBe(false)
  })

  it('replaceIf sets only while the key holds the value, with the new TTL', async () => {
    await store.set('claim', 'mine', { ttlMs: t.shortTtlMs })
    expect(await store.replaceIf('claim', 'theirs', 'stolen', { ttlMs: 60_000 })).toBe(false)
    expect(await store.get('claim')).toBe('mine')
    expect(await store.replaceIf('claim', 'mine', 'mine', { ttlMs: 60_000 })).toBe(true)
    await t.pass(t.shortTtlMs * 3)
    expect(await store.get('claim')).toBe('mine')
    expect(await store.replaceIf('claim', 'mine', 'forever')).toBe(true)
    expect(await store.get('claim')).toBe('forever')
    expect(await store.replaceIf('absent', 'mine', 'taken')).toBe(false)
    expect(await store.get('absent')).toBeUndefined()
    await store.set('gone', 'mine', { ttlMs: t.shortTtlMs })
    await t.pass(t.shortTtlMs * 3)
    expect(await store.replaceIf('gone', 'mine', 'back', { ttlMs: 60_000 })).toBe(false)
    expect(await store.get('gone')).toBeUndefined()
  })

  it('increment counts from zero by 1 or by a given step', async () => {
    expect(await store.increment('n')).toBe(1)
    expect(await store.increment('n')).toBe(2)
    expect(await store.increment('n', 5)).toBe(7)
    expect(await store.increment('n', -3)).toBe(4)
    expect(await store.get('n')).toBe('4')
  })

  it('increment is atomic under concurrent callers', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => store.increment('c')))
    expect(new Set(results).size).toBe(50)
    expect(Math.max(...results)).toBe(50)
  })

  it('increment keeps a fixed window: the TTL is set at creation and not extended', async () => {
    const window = t.shortTtlMs * 4
    expect(await store.increment('w', 1, { ttlMs: window })).toBe(1)
    await t.pass(t.shortTtlMs * 2)
    // A later increment inside the window neither resets the count nor extends the TTL.
    expect(await store.increment('w', 1, { ttlMs: window })).toBe(2)
    await t.pass(t.shortTtlMs * 3)
    expect(await store.get('w')).toBeUndefined()
    expect(await store.increment('w', 1, { ttlMs: window })).toBe(1)
  })

  it('increment of a counter that went back to the step value does not restart its window', async () => {
    const window = t.shortTtlMs * 4
    expect(await store.increment('w', 1, { ttlMs: window })).toBe(1)
    expect(await store.increment('w', -1, { ttlMs: window })).toBe(0)
    await t.pass(t.shortTtlMs * 2)
    expect(await store.increment('w', 1, { ttlMs: window })).toBe(1)
    await t.pass(t.shortTtlMs * 3)
    expect(await store.get('w')).toBeUndefined()
  })

  it('increment of a value that is not an integer rejects', async () => {
    await store.set('text', 'hello')
    await expect(store.increment('text')).rejects.toThrow()
    expect(await store.get('text')).toBe('hello')
  })

  it('keys are independent', async () => {
    await store.set('a', '1')
    await store.set('b', '2')
    await store.delete('a')
    expect(await store.get('b')).toBe('2')
  })
})
