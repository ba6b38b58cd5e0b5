import type { ApiKeyInfo } from './api-key-provider.ts'

interface Entry {
  info: ApiKeyInfo
  /** The key's own `expires_at` in ms, if it has one. */
  expiresAt: number | undefined
  storedAt: number
}

/**
 * Successful verifications, keyed by the SHA-256 of the raw key (the raw key is never held).
 * Entries live at most `ttlMs`, never past the key's expiry, and go the moment the key's row
 * changes. Bounded: the oldest entry makes room for a new one.
 */
export class VerifiedKeyCache {
  readonly #entries = new Map<string, Entry>()
  readonly #byId = new Map<number, string>()
  readonly #ttlMs: number
  readonly #maxEntries: number

  constructor(ttlMs: number, maxEntries: number) {
    this.#ttlMs = ttlMs
    this.#maxEntries = maxEntries
  }

  get size(): number {
    return this.#entries.size
  }

  get(digest: string, now: number): ApiKeyInfo | undefined {
    const entry = this.#entries.get(digest)
    if (!entry) return undefined
    if (
      now - entry.storedAt >= this.#ttlMs ||
      (entry.expiresAt !== undefined && now >= entry.expiresAt)
    ) {
      this.#remove(digest, entry)
      return undefined
    }
    return entry.info
  }

  set(digest: string, info: ApiKeyInfo, expiresAt: number | undefined, now: number): void {
    if (this.#ttlMs <= 0 || this.#maxEntries <= 0) return
    const previous = this.#entries.get(digest)
    if (previous) this.#remove(digest, previous)
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done) break
      const entry = this.#entries.get(oldest.value)
      if (entry) this.#remove(oldest.value, entry)
    }
    this.#entries.set(digest, { info, expiresAt, storedAt: now })
    this.#byId.set(info.id, digest)
  }

  /** Forgets one key (by row id), or everything. */
  invalidate(id?: number): void {
    if (id === undefined) {
      this.#entries.clear()
      this.#byId.clear()
      return
    }
    const digest = this.#byId.get(id)
    if (digest === undefined) return
    const entry = this.#entries.get(digest)
    if (entry) this.#remove(digest, entry)
  }

  #remove(digest: string, entry: Entry): void {
    this.#entries.delete(digest)
    if (this.#byId.get(entry.info.id) === digest) this.#byId.delete(entry.info.id)
  }
}
