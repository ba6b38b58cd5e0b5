import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { Limit } from '../context.ts'
import { sha256Hex } from '../protocol/random.ts'

/** A fixed-window counter in the shared store: many instances count together. */
export async function overLimit(store: KeyValueStore, key: string, limit: Limit): Promise<boolean> {
  const value = await store.get(throttleKey(key))
  return Number(value ?? '0') >= limit.max
}

/** Counts one event; returns true when this event went over the limit. */
export async function hit(store: KeyValueStore, key: string, limit: Limit): Promise<boolean> {
  const count = await store.increment(throttleKey(key), 1, { ttlMs: limit.windowMs })
  return count > limit.max
}

function throttleKey(key: string): string {
  return `oauth:throttle:${sha256Hex(key)}`
}
