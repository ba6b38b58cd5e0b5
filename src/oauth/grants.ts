import { type Clock, systemClock } from '../core/clock.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import { displayName } from './protocol/display-name.ts'
import { type AccessGrant, GRANT_ACTIONS, type GrantAction } from './protocol/grant.ts'
import { GrantIndex, type GrantRecord } from './store/grants.ts'

/** An application a person connected, with what it may do. */
export interface ConnectedApp {
  clientId: string
  /** The name the client gave itself, with invisible controls removed. */
  clientName: string | undefined
  /** For clients identified by a metadata-document URL: the host that serves it. */
  verifiedHost: string | undefined
  /** The scopes of all its live grants. */
  scopes: string[]
  /**
   * Per model, the actions its live grants allow together; undefined when none of them
   * carries a grant (the app describes no access).
   */
  access: AccessGrant | undefined
  /** How many live grants (sign-ins, devices) it holds. */
  grants: number
  firstAuthorizedAt: Date
  lastUsedAt: Date
}

/** Options of `createOAuthGrants`. */
export interface OAuthGrantsOptions {
  /** The authorization server's KeyValueStore (the same one passed to `oauthServer`). */
  store: KeyValueStore
  clock?: Clock
}

/** What people approved, for account pages and account life-cycle hooks. */
export interface OAuthGrants {
  /** The applications a user has connected, most recently used first. */
  listForUser(userId: string): Promise<ConnectedApp[]>
  /** Disconnects one application: all its grants for this user end. Returns how many. */
  revokeClientForUser(userId: string, clientId: string): Promise<number>
  /**
   * Ends every grant of a user, including approvals not yet exchanged for tokens. Call it
   * when an account is deleted or its password changes. Returns how many grants ended.
   */
  revokeAllForUser(userId: string): Promise<number>
}

/**
 * The grants library API. It reads and writes the same store as `oauthServer`, so it can be
 * built anywhere in the application (a user service, a CLI command) from that store alone.
 * @example
 * ```ts
 * const grants = createOAuthGrants({ store: shared.kv }) // the store given to oauthServer
 * await grants.revokeAllForUser(userId)
 * ```
 */
export function createOAuthGrants(options: OAuthGrantsOptions): OAuthGrants {
  if (!options?.store)
    throw new TypeError('createOAuthGrants: `store` (a KeyValueStore) is required')
  return grantsApi(new GrantIndex(options.store, options.clock ?? systemClock))
}

export function grantsApi(index: GrantIndex): OAuthGrants {
  return {
    async listForUser(userId) {
      return groupByClient(await index.listForUser(userId))
    },
    async revokeClientForUser(userId, clientId) {
      const grants = (await index.listForUser(userId)).filter((g) => g.clientId === clientId)
      await Promise.all(grants.map((grant) => index.revoke(grant)))
      return grants.length
    },
    revokeAllForUser: (userId) => index.revokeAllForUser(userId),
  }
}

function groupByClient(records: GrantRecord[]): ConnectedApp[] {
  const apps = new Map<string, ConnectedApp>()
  for (const record of records) {
    const app = apps.get(record.clientId)
    if (!app) {
      apps.set(record.clientId, {
        clientId: record.clientId,
        clientName: displayName(record.clientName),
        verifiedHost: record.verifiedHost,
        scopes: [...record.scope],
        access: record.grant,
        grants: 1,
        firstAuthorizedAt: new Date(record.createdAt),
        lastUsedAt: new Date(record.lastUsedAt),
      })
      continue
    }
    app.grants += 1
    app.access = joinGrants(app.access, record.grant)
    for (const scope of record.scope) if (!app.scopes.includes(scope)) app.scopes.push(scope)
    if (record.createdAt < app.firstAuthorizedAt.getTime()) {
      app.firstAuthorizedAt = new Date(record.createdAt)
    }
    if (record.lastUsedAt > app.lastUsedAt.getTime()) app.lastUsedAt = new Date(record.lastUsedAt)
  }
  return [...apps.values()].sort((a, b) => b.lastUsedAt.getTime() - a.lastUsedAt.getTime())
}

/** What two grants allow together. */
function joinGrants(
  a: AccessGrant | undefined,
  b: AccessGrant | undefined,
): AccessGrant | undefined {
  if (!a || !b) return a ?? b
  const joined: Record<string, GrantAction[]> = {}
  for (const model of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const actions = new Set([...(a[model] ?? []), ...(b[model] ?? [])])
    joined[model] = GRANT_ACTIONS.filter((action) => actions.has(action))
  }
  return joined
}
