import { eq } from 'drizzle-orm'
import { DependencyError } from '../../core/errors.ts'
import type { Database } from '../../db/database.ts'
import { oauthClientsPg, oauthClientsSqlite } from '../../db/tables/oauth-clients.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'

/** Where registered clients live. The database one is the real one; memory is for tests. */
export interface ClientStore {
  get(clientId: string): Promise<RegisteredClient | undefined>
  register(client: RegisteredClient): Promise<void>
}

export class MemoryClientStore implements ClientStore {
  readonly #clients = new Map<string, RegisteredClient>()

  async get(clientId: string): Promise<RegisteredClient | undefined> {
    return this.#clients.get(clientId)
  }

  async register(client: RegisteredClient): Promise<void> {
    this.#clients.set(client.clientId, client)
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
  }
}
