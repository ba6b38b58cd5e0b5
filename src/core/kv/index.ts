export { keyDigest } from './key-digest.ts'
export type { KeyValueStore, SetOptions } from './key-value-store.ts'
export { MemoryKeyValueStore, type MemoryStoreOptions } from './memory-store.ts'
export { RedisKeyValueStore, type RedisStoreOptions } from './redis-store.ts'
