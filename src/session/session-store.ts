import { createHash, randomBytes } from 'node:crypto'
import { constantTimeEqual } from '../core/http/constant-time.ts'
import { keyDigest } from '../core/kv/key-digest.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'

/** A signed-in browser: what `sessions.current(request)` returns. */
export interface Session {
  id: string
  userId: string
  /** Sent back in every form the session posts (consent, device approval, logout). */
  csrfToken: string
  createdAt: number
}

/** Options of `createSessionStore`. */
export interface SessionStoreOptions {
  /** Where sessions live: the shared KeyValueStore (Redis with REDIS_URL), so any instance sees them. */
  store: KeyValueStore
  /** `Secure` cookies; true when the app is served over https. */
  secure: boolean
  /** Default 8 hours. */
  ttlMs?: number
  /**
   * Default `__Host-kiln_session` over https (a sibling subdomain cannot plant it) and
   * `kiln_session` over http.
   */
  cookieName?: string
  now?: () => number
  /**
   * A value that changes whenever the user's credentials do (their password hash), or
   * undefined when the user no longer exists. A session made under another value is no longer
   * current: changing a password or deleting a user ends their sessions, whatever code path
   * (API, MCP tool, SQL) made the change. Costs one lookup per `current()`.
   */
  credentialStamp?: (userId: string) => Promise<string | undefined>
}

const ID = /^[A-Za-z0-9_-]{43}$/

/** Store keys name a session and a user by digest: the cookie value is a bearer secret. */
const sessionKey = (id: string) => `session:${keyDigest(id)}`
const generationKey = (userId: string) => `session-generation:${keyDigest(userId)}`

type StoredSession = Session & { generation: number; stamp: string | undefined }

/**
 * Cookie sessions whose data lives in the KeyValueStore. The cookie holds only a random
 * 256-bit id (HttpOnly, SameSite=Lax); a new id is made at every login, so a planted cookie
 * is never upgraded. `endAllFor(userId)` ends every session of a user at once (password
 * changed, user deleted): each session carries the user's session generation, and a session
 * of an older generation is no longer current.
 */
export class SessionStore {
  readonly cookieName: string
  readonly secure: boolean
  readonly #kv: KeyValueStore
  readonly #secure: boolean
  readonly #ttlMs: number
  readonly #now: () => number
  readonly #stamp: ((userId: string) => Promise<string | undefined>) | undefined

  constructor(options: SessionStoreOptions) {
    if (!options?.store)
      throw new TypeError('createSessionStore: `store` (a KeyValueStore) is required')
    this.#kv = options.store
    this.#secure = options.secure
    this.secure = options.secure
    this.#ttlMs = options.ttlMs ?? 8 * 60 * 60 * 1000
    this.#now = options.now ?? Date.now
    this.#stamp = options.credentialStamp
    this.cookieName =
      options.cookieName ?? (options.secure ? '__Host-kiln_session' : 'kiln_session')
  }

  /** The session a request's cookie names, if it is still alive. */
  async current(request: Request): Promise<Session | undefined> {
    const id = readCookie(request.headers.get('cookie'), this.cookieName)
    if (!id || !ID.test(id)) return undefined
    const stored = await this.#kv.get(sessionKey(id))
    if (!stored) return undefined
    const { generation, stamp, ...session } = JSON.parse(stored) as StoredSession
    if (generation !== (await this.#generation(session.userId))) return undefined
    if (this.#stamp) {
      const now = await this.#stampOf(session.userId)
      if (now === undefined || stamp === undefined || !constantTimeEqual(now, stamp))
        return undefined
    }
    return session
  }

  /** A new session for `userId` and the `Set-Cookie` value that carries it. */
  async create(userId: string): Promise<{ session: Session; cookie: string }> {
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      userId,
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: this.#now(),
    }
    const stored: StoredSession = {
      ...session,
      generation: await this.#generation(userId),
      stamp: this.#stamp ? await this.#stampOf(userId) : undefined,
    }
    await this.#kv.set(sessionKey(session.id), JSON.stringify(stored), { ttlMs: this.#ttlMs })
    return { session, cookie: this.#cookie(session.id, Math.floor(this.#ttlMs / 1000)) }
  }

  /** Ends one session; returns the `Set-Cookie` value that clears the cookie. */
  async destroy(session: Session): Promise<string> {
    await this.#kv.delete(sessionKey(session.id))
    return this.#cookie('', 0)
  }

  /** Ends every session of a user, on every instance: call it when a password changes or a user is deleted. */
  async endAllFor(userId: string): Promise<void> {
    await this.#kv.increment(generationKey(userId), 1)
  }

  /** A digest of the credential stamp: the session record never holds a password hash. */
  async #stampOf(userId: string): Promise<string | undefined> {
    const value = await this.#stamp?.(userId)
    return value === undefined ? undefined : createHash('sha256').update(value).digest('base64url')
  }

  async #generation(userId: string): Promise<number> {
    return Number((await this.#kv.get(generationKey(userId))) ?? '0')
  }

  #cookie(value: string, maxAge: number): string {
    const parts = [
      `${this.cookieName}=${value}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${maxAge}`,
    ]
    if (this.#secure) parts.push('Secure')
    return parts.join('; ')
  }
}

/**
 * Cookie sessions kept in a `KeyValueStore`: the cookie holds a random id, the store names
 * the session by its SHA-256.
 * @example
 * ```ts
 * const sessions = createSessionStore({
 *   store: shared.kv,
 *   secure: config.appUrl.startsWith('https:'),
 * })
 * const session = await sessions.current(c.req.raw)
 * ```
 */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  return new SessionStore(options)
}

/** One cookie's value from a `Cookie` header. */
export function readCookie(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}
