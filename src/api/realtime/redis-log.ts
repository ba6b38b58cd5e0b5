import type { Redis } from '../../core/redis.ts'
import { type Change, type ChangeEvent, parseEvent } from './changes.ts'
import { type ChangeLog, type Replay, type RetainedWindow, replayOf } from './log.ts'

/** How long a claim holds: long enough for the slowest instance to hear the same notification. */
const CLAIM_MS = 60_000

/**
 * Numbers a batch (INCR per change) and keeps it (RPUSH, LTRIM to the window's size) in one
 * script, so ids follow commit order on the list whichever instance wrote. The time is Redis's,
 * one clock for every instance's window. KEYS: seq, list, and a claim: the batch is numbered
 * only by the first to claim it (SET NX), in the same step, so instances that each take the
 * same notifications in the same order number them in that order. ARGV: size, each change's JSON.
 */
const APPEND = `
if KEYS[3] and not redis.call('SET', KEYS[3], '1', 'PX', ${CLAIM_MS}, 'NX') then return {} end
local t = redis.call('TIME')
local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 2, #ARGV do
  local seq = redis.call('INCR', KEYS[1])
  local event = '{"seq":' .. seq .. ',"at":' .. at .. ',' .. string.sub(ARGV[i], 2)
  redis.call('RPUSH', KEYS[2], event)
  out[#out + 1] = event
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
return out`

/** Head, retained events and Redis's time, read together. KEYS: seq, list. */
const READ = `
local t = redis.call('TIME')
return { redis.call('GET', KEYS[1]) or '0', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000),
  redis.call('LRANGE', KEYS[2], 0, -1) }`

/** The log in Redis: every instance numbers from one counter and resumes from one window. */
export class RedisChangeLog implements ChangeLog {
  readonly #redis: Redis
  readonly #window: RetainedWindow
  readonly #prefix: string

  constructor(redis: Redis, window: RetainedWindow, prefix: string) {
    this.#redis = redis
    this.#window = window
    this.#prefix = prefix
  }

  async append(resource: string, changes: Change[], claim?: string): Promise<ChangeEvent[]> {
    if (changes.length === 0) return []
    const json = changes.map((change) => JSON.stringify(change))
    const keys = this.#keys(resource)
    if (claim !== undefined) keys.push(`${keys[0]}:claim:${claim}`)
    const out = (await this.#redis.eval(
      APPEND,
      keys.length,
      ...keys,
      this.#window.size,
      ...json,
    )) as string[]
    return out.map((text) => parseEvent(text)!)
  }

  async head(resource: string): Promise<number> {
    return Number((await this.#redis.get(this.#keys(resource)[0]!)) ?? 0)
  }

  async since(resource: string, after: number): Promise<Replay> {
    const [seq, list] = this.#keys(resource) as [string, string]
    const [head, now, items] = (await this.#redis.eval(READ, 2, seq, list)) as [
      string,
      number,
      string[],
    ]
    const events = items.map(parseEvent).filter((event) => event !== undefined)
    return replayOf(events, Number(head), after, this.#window, now)
  }

  #keys(resource: string): string[] {
    // A hash tag keeps both keys of a resource on one Redis Cluster slot, as the script needs.
    const base = `${this.#prefix}{${resource}}`
    return [`${base}:seq`, `${base}:events`]
  }
}
