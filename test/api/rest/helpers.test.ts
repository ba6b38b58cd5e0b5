import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createRecordCounter, parseId, parseJsonBody, renameKeys } from '../../../src/api/index.ts'
import { ManualClock, MemoryKeyValueStore, NotFoundError } from '../../../src/core/index.ts'

describe('parseId', () => {
  it('accepts whole numbers the column can hold, 404 otherwise', () => {
    expect(parseId('42')).toBe(42)
    expect(parseId('2147483647', { max: 2_147_483_647 })).toBe(2_147_483_647)
    for (const raw of ['2147483648', 'x', '-1', '1e3', '', undefined]) {
      expect(() => parseId(raw, { max: 2_147_483_647 })).toThrow(NotFoundError)
    }
  })
})

describe('parseJsonBody', () => {
  const schema = z.strictObject({ name: z.string() })
  const request = (body: string, type = 'application/json', length?: string) =>
    new Request('http://x/', {
      method: 'POST',
      body,
      headers: { 'content-type': type, ...(length ? { 'content-length': length } : {}) },
    })

  it('accepts application/json with parameters and +json types', async () => {
    await expect(
      parseJsonBody(request('{"name":"a"}', 'application/json; charset=utf-8'), schema),
    ).resolves.toEqual({ name: 'a' })
    await expect(
      parseJsonBody(request('{"name":"a"}', 'application/merge-patch+json'), schema),
    ).resolves.toEqual({ name: 'a' })
  })

  it('413 over the size limit, 400 for invalid UTF-8', async () => {
    await expect(
      parseJsonBody(request(`{"name":"${'a'.repeat(100)}"}`), schema, { maxBytes: 50 }),
    ).rejects.toMatchObject({ status: 413 })
    const invalid = new Request('http://x/', {
      method: 'POST',
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
      headers: { 'content-type': 'application/json' },
    })
    await expect(parseJsonBody(invalid, schema)).rejects.toMatchObject({ status: 400 })
  })

  it('413 for a chunked body as soon as it passes the limit: 8 MiB sent, about 1 MiB read', async () => {
    let pulled = 0
    const chunk = new TextEncoder().encode(`"${'a'.repeat(64 * 1024 - 2)}",`)
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 8 * 1024 * 1024) return controller.close()
        pulled += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const chunked = new Request('http://x/', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit)
    await expect(parseJsonBody(chunked, schema)).rejects.toMatchObject({ status: 413 })
    expect(pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * chunk.byteLength)
  })

  it('deeply nested bodies are rejected without a stack overflow', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    const error = await parseJsonBody(request(deep), schema).catch((e: { status: number }) => e)
    expect([400, 422]).toContain((error as { status: number }).status)
  })
})

describe('renameKeys', () => {
  it('renames mapped keys, keeps others, drops undefined', () => {
    expect(
      renameKeys({ author_id: 1, title: 't', body: undefined }, { author_id: 'authorId' } as const),
    ).toEqual({
      authorId: 1,
      title: 't',
    })
  })
})

describe('createRecordCounter', () => {
  const full = { page: 1, perPage: 10, offset: 0 }

  it('a page that is not full gives the total without counting', async () => {
    const counter = createRecordCounter()
    let counts = 0
    const count = async () => ++counts
    expect(await counter.total('t', full, 7, count)).toBe(7)
    expect(await counter.total('t', { page: 3, perPage: 10, offset: 20 }, 4, count)).toBe(24)
    expect(counts).toBe(0)
  })

  it('caches a full page count until a write invalidates it or the TTL passes', async () => {
    const clock = new ManualClock(0)
    const counter = createRecordCounter({ store: new MemoryKeyValueStore({ clock }), ttlMs: 5_000 })
    let rows = 100
    let queries = 0
    const count = async () => {
      queries++
      return rows
    }
    expect(await counter.total('t', full, 10, count)).toBe(100)
    rows = 101
    expect(await counter.total('t', full, 10, count)).toBe(100)
    expect(queries).toBe(1)
    await counter.invalidate('t')
    expect(await counter.total('t', full, 10, count)).toBe(101)
    rows = 102
    clock.advance(5_001)
    expect(await counter.total('t', full, 10, count)).toBe(102)
    expect(queries).toBe(3)
  })

  it('a count racing a write is not kept', async () => {
    const counter = createRecordCounter()
    let release!: () => void
    const slow = () =>
      new Promise<number>((resolve) => {
        release = () => resolve(50)
      })
    const racing = counter.total('t', full, 10, slow)
    await new Promise((resolve) => setImmediate(resolve))
    await counter.invalidate('t')
    release()
    expect(await racing).toBe(50)
    expect(await counter.total('t', full, 10, async () => 51)).toBe(51)
  })

  it('concurrent misses share one count; ttlMs 0 counts every time', async () => {
    const counter = createRecordCounter()
    let queries = 0
    const count = async () => {
      queries++
      await new Promise((resolve) => setTimeout(resolve, 5))
      return 40
    }
    const totals = await Promise.all([1, 2, 3].map(() => counter.total('t', full, 10, count)))
    expect(totals).toEqual([40, 40, 40])
    expect(queries).toBe(1)
    const uncached = createRecordCounter({ ttlMs: 0 })
    await uncached.total('t', full, 10, count)
    await uncached.total('t', full, 10, count)
    expect(queries).toBe(3)
  })
})
