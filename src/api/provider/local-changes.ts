import type { KeyChangeListener } from './change-feed.ts'

const listeners = new WeakMap<object, Set<KeyChangeListener>>()

/**
 * In-process notice of key changes made through kiln (`revokeApiKey`) to providers on the
 * same `Database` object, so the process that revokes refuses the key before the call returns.
 */
export function onLocalKeyChange(database: object, listener: KeyChangeListener): () => void {
  let set = listeners.get(database)
  if (!set) {
    set = new Set()
    listeners.set(database, set)
  }
  set.add(listener)
  return () => set.delete(listener)
}

export function emitLocalKeyChange(database: object, id: number | undefined): void {
  for (const listener of listeners.get(database) ?? []) listener(id)
}
