import { randomBytes } from 'node:crypto'
import type { KeyValueStore } from 'kiln/core'

export interface Session {
  id: string
  userId: string
  /** Sent back in every form the session posts (consent, device approval, logout). */
  csrfToken: string
  createdAt: number
}

export interface SessionStoreOptions {
  kv: KeyValueStore
  /** Secure cookies when the app is served over https. */
  secure: boolean
  ttlMs?: number
  cookieName?: string
}

/**
 * Cookie sessions whose data lives in the KeyValueStore (Redis with REDIS_URL), so every
 * instance sees a login made on any other. The cookie holds only a random 256-bit id.
 */
export class SessionStore {
  readonly cookieName: string
  readonly #kv: KeyValueStore
  readonly #secure: boolean
  readonly #ttlMs: number

  constructor(options: SessionStoreOptions) {
    this.#kv = options.kv
    this.#secure = options.secure
    this.#ttlMs = options.ttlMs ?? 8 * 60 * 60 * 1000
    this.cookieName = options.cookieName ?? 'kiln_session'
  }

  /** The session a request's cookie names, if it is still alive. */
  async current(request: Request): Promise<Session | undefined> {
    const id = readCookie(request.headers.get('cookie'), this.cookieName)
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined
    const stored = await this.#kv.get(`session:${id}`)
    return stored ? (JSON.parse(stored) as Session) : undefined
  }

  /** A new session (a new id on every login, so a planted cookie is never upgraded). */
  async create(userId: string): Promise<{ session: Session; cookie: string }> {
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      userId,
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: Date.now(),
    }
    await this.#kv.set(`session:${session.id}`, JSON.stringify(session), { ttlMs: this.#ttlMs })
    return { session, cookie: this.#cookie(session.id, Math.floor(this.#ttlMs / 1000)) }
  }

  async destroy(session: Session): Promise<string> {
    await this.#kv.delete(`session:${session.id}`)
    return this.#cookie('', 0)
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

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}
