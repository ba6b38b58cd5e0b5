import { describe, expect, it } from 'vitest'
import { backoffDelayMs, retry } from '../../src/core/index.ts'

describe('retry: the one retry loop', () => {
  it('retries thrown errors while retryDelay answers a wait, then returns the value', async () => {
    const waits: number[] = []
    let tries = 0
    const value = await retry(
      async (attempt) => {
        tries++
        if (attempt < 3) throw new Error(`try ${attempt}`)
        return 'done'
      },
      {
        attempts: 5,
        retryDelay: (outcome, attempt) => (outcome.ok ? undefined : attempt * 10),
        sleep: async (ms) => void waits.push(ms),
      },
    )
    expect(value).toBe('done')
    expect(tries).toBe(3)
    expect(waits).toEqual([10, 20])
  })

  it('retries returned values too (a 429), and stops at the attempts with the last outcome', async () => {
    const retried: number[] = []
    const answer = await retry(async () => ({ status: 429 }), {
      attempts: 3,
      retryDelay: (outcome) => (outcome.ok && outcome.value.status === 429 ? 1 : undefined),
      sleep: async () => {},
      onRetry: (_outcome, attempt) => retried.push(attempt),
    })
    expect(answer).toEqual({ status: 429 })
    expect(retried).toEqual([1, 2])
  })

  it('throws the error retryDelay refuses to retry, at once', async () => {
    let tries = 0
    await expect(
      retry(
        async () => {
          tries++
          throw new Error('permanent')
        },
        { attempts: 5, retryDelay: () => undefined, sleep: async () => {} },
      ),
    ).rejects.toThrow('permanent')
    expect(tries).toBe(1)
  })

  it('backs off exponentially, capped, with equal jitter when given randomness', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, { baseMs: 500 }))).toEqual([
      500, 1000, 2000, 4000,
    ])
    expect(backoffDelayMs(10, { baseMs: 500, maxMs: 8000 })).toBe(8000)
    expect(backoffDelayMs(1, { baseMs: 1000, random: () => 0 })).toBe(500)
    expect(backoffDelayMs(1, { baseMs: 1000, random: () => 0.999 })).toBe(1000)
  })
})
