import { and, count, eq, inArray, isNull, lt } from 'drizzle-orm'
import { DependencyError } from '../../core/errors.ts'
import type { Database } from '../../db/database.ts'
import { oauthClientsPg, oauthClientsSqlite } from '../../db/tables/oauth-clients.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'

/** Where registered clients live. The database one is the real one; memory is for tests. */
export interface ClientStore {
  get(clientId: string): Promise<RegisteredClient | undefined>
  register(client: RegisteredClient): Promise<void>
  /** Records that the client got a token (kiln calls it at most once a day per client). */
  markUsed?(clientId: string, at: Date): Promise<void>
  /** Removes up to `limit` clients registered before `before` that never got a token. */
  pruneUnused?(before: Date, limit: number): Promise<number>
  /** How many clients never got a token. */
  countUnused?(): Promise<number>
}

export class MemoryClientStore implements ClientStore {
  readonly #clients = new Map<string, RegisteredClient>()

  async get(clientId: string): Promise<RegisteredClient | undefined> {
    return this.#clients.get(clientId)
  }

  async register(client: RegisteredClient): Promise<void> {
    this.#clients.set(client.clientId, client)
  }

  async markUsed(clientId: string, at: Date): Promise<void> {
    const client = this.#clients.get(clientId)
    if (client) client.lastUsedAt = at.getTime()
  }

  async pruneUnused(before: Date, limit: number): Promise<number> {
    const unused = [...this.#clients.values()]
      .filter((c) => c.lastUsedAt === undefined && c.issuedAt * 1000 < before.getTime())
      .slice(0, limit)
    for (const client of unused) this.#clients.delete(client.clientId)
    return unused.length
  }

  async countUnused(): Promise<number> {
    let count = 0
    for (const client of this.#clients.values()) if (client.lastUsedAt === undefined) count++
    return count
  }
}

type Row = {
  clientId: string
  clientName: string | null
  redirectUris: string
  grantTypes: string
  responseTypes: string
  applicationType: string | null
  scope: string | null
  metadata: string
  createdAt: Date
  lastUsedAt?: Date | null
}

/** Clients in the `oauth_clients` table, on Postgres or SQLite. */
export function createDatabaseClientStore(database: Database): ClientStore {
  return {
    async get(clientId) {
      // Issued ids are base64url; Postgres refuses text holding NUL, so such an id is just unknown.
      if (clientId.length === 0 || clientId.length > 200 || clientId.includes('\u0000')) {
        return undefined
      }
      const rows = await wrap('read', async (): Promise<Row[]> => {
        if (database.dialect === 'postgres') {
          return database.db
            .select()
            .from(oauthClientsPg)
            .where(eq(oauthClientsPg.clientId, clientId))
            .limit(1)
        }
        return database.db
          .select()
          .from(oauthClientsSqlite)
          .where(eq(oauthClientsSqlite.clientId, clientId))
          .limit(1)
      })
      const row = rows[0]
      return row ? fromRow(row) : undefined
    },
    async register(client) {
      const row = toRow(client)
      await wrap('write', async () => {
        if (database.dialect === 'postgres') {
          await database.db.insert(oauthClientsPg).values(row)
        } else {
          await database.db.insert(oauthClientsSqlite).values(row)
        }
      })
    },
    async markUsed(clientId, at) {
      await wrap('write', async () => {
        if (database.dialect === 'postgres') {
          const t = oauthClientsPg
          await database.db.update(t).set({ lastUsedAt: at }).where(eq(t.clientId, clientId))
        } else {
          const t = oauthClientsSqlite
          await database.db.update(t).set({ lastUsedAt: at }).where(eq(t.clientId, clientId))
        }
      })
    },
    async pruneUnused(before, limit) {
      // Bounded: one sweep removes at most `limit` rows, oldest first (partial index).
      return wrap('prune', () =>
        database.dialect === 'postgres'
          ? pruneOldestUnused(database.db, oauthClientsPg, before, limit)
          : pruneOldestUnused(database.db, oauthClientsSqlite, before, limit),
      )
    },
    async countUnused() {
      return wrap('count', async () => {
        const t = database.dialect === 'postgres' ? oauthClientsPg : oauthClientsSqlite
        // biome-ignore lint/suspicious/noExplicitAny: either dialect's Drizzle database builds this statement
        const db = database.db as any
        const rows: Array<{ n: number | string }> = await db
          .select({ n: count() })
          .from(t)
          .where(isNull(t.lastUsedAt))
        return Number(rows[0]?.n ?? 0)
      })
    },
  }
}

async function wrap<T>(action: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (cause) {
    throw new DependencyError(`Could not ${action} OAuth clients`, { cause })
  }
}

function toRow(client: RegisteredClient): Row {
  return {
    clientId: client.clientId,
    clientName: client.clientName ?? null,
    redirectUris: JSON.stringify(client.redirectUris),
    grantTypes: JSON.stringify(client.grantTypes),
    responseTypes: JSON.stringify(client.responseTypes),
    applicationType: client.applicationType ?? null,
    scope: client.scope ?? null,
    metadata: JSON.stringify(client.metadata),
    createdAt: new Date(client.issuedAt * 1000),
  }
}

function fromRow(row: Row): RegisteredClient {
  return {
    clientId: row.clientId,
    clientName: row.clientName ?? undefined,
    redirectUris: JSON.parse(row.redirectUris) as string[],
    grantTypes: JSON.parse(row.grantTypes) as string[],
    responseTypes: JSON.parse(row.responseTypes) as string[],
    applicationType:
      row.applicationType === 'web' || row.applicationType === 'native'
        ? row.applicationType
        : undefined,
    scope: row.scope ?? undefined,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    issuedAt: Math.floor(row.createdAt.getTime() / 1000),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.getTime() : undefined,
  }
}

/**
 * Deletes up to `limit` clients registered before `before` that never got a token, oldest
 * first. The statements are the same on both dialects; only their Drizzle types differ.
 */
async function pruneOldestUnused(
  // biome-ignore lint/suspicious/noExplicitAny: either dialect's Drizzle database builds these statements
  db: any,
  t: typeof oauthClientsPg | typeof oauthClientsSqlite,
  before: Date,
  limit: number,
): Promise<number> {
  const unused = and(isNull(t.lastUsedAt), lt(t.createdAt, before))
  const rows: Array<{ id: string }> = await db
    .select({ id: t.clientId })
    .from(t)
    .where(unused)
    .orderBy(t.createdAt)
    .limit(limit)
  if (rows.length === 0) return 0
  const ids = rows.map((row) => row.id)
  await db.delete(t).where(and(unused, inArray(t.clientId, ids)))
  return ids.length
}
