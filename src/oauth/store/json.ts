import type { KeyValueStore } from '../../core/kv/key-value-store.ts'

/** Reads a JSON record written by this module; undefined when absent. */
export async function getJson<T>(store: KeyValueStore, key: string): Promise<T | undefined> {
  const raw = await store.get(key)
  return raw === undefined ? undefined : (JSON.parse(raw) as T)
}

export async function takeJson<T>(store: KeyValueStore, key: string): Promise<T | undefined> {
  const raw = await store.take(key)
  return raw === undefined ? undefined : (JSON.parse(raw) as T)
}

export async function setJson(
  store: KeyValueStore,
  key: string,
  value: unknown,
  ttlMs: number,
): Promise<void> {
  await store.set(key, JSON.stringify(value), { ttlMs: Math.max(1, ttlMs) })
}
