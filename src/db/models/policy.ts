import { getTableName, type SQL, type Table } from 'drizzle-orm'
import { resourceName } from './inflect.ts'

/**
 * What one model lets API callers read, declared once (by `defineListQuery` beside its
 * controller) and read by every surface that reaches the model from elsewhere: `include=` on
 * another resource reads its records under these rules, not the including resource's.
 */
/**
 * Who reads: an API key (`ApiKeyInfo` is one: its `id` and `scopes`), an assistant acting for
 * a user (the MCP tools pass the token's `userId`, `tenantId`, `clientId` and scopes), or any
 * caller with scopes.
 */
export interface PolicyCaller {
  id?: number | string | undefined
  scopes: readonly string[]
  /** The user an assistant acts for (an OAuth token's subject). */
  userId?: string | undefined
  /** The caller's tenant, when the app has tenants. */
  tenantId?: string | undefined
  /** The OAuth client an assistant's token belongs to. */
  clientId?: string | undefined
}

/**
 * A condition on the rows a caller may read (its own, its tenant's, the published ones), with
 * a `key` naming it in the count cache (`owner:42`); undefined for every row.
 */
export type RowFilter = (
  caller: PolicyCaller | undefined,
) => { where: SQL; key: string } | undefined

export interface ModelReadPolicy {
  /** The scope a key needs to read the model (`users:read`). */
  readScope: string
  /** The fields (column names) readers may see: never a credential the model did not expose. */
  readable: ReadonlySet<string>
  /** The rows a caller may read, in lists and in `include=` from other resources. */
  rows: RowFilter | undefined
}

const policies = new WeakMap<Table, ModelReadPolicy>()

/** Records the read policy of `table`: the last declaration of a table wins. */
export function declareReadPolicy(table: Table, policy: ModelReadPolicy): void {
  policies.set(table, policy)
}

/** The declared read policy of `table`, if any. */
export function readPolicyOf(table: Table): ModelReadPolicy | undefined {
  return policies.get(table)
}

/** The scope that reads a model by default: its resource's (`users` → `users:read`). */
export function defaultReadScope(table: Table): string {
  return `${resourceName(getTableName(table))}:read`
}

/**
 * What one model lets API callers write, declared once beside its controller
 * (`declareRequests`): the request schemas of create and update. The MCP tools write the model
 * under them when the app does not hand them over itself.
 */
export interface ModelWritePolicy {
  create?: object | undefined
  update?: object | undefined
}

const writePolicies = new WeakMap<Table, ModelWritePolicy>()

/** Records the write policy of `table`: the last declaration of a table wins. */
export function declareWritePolicy(table: Table, policy: ModelWritePolicy): void {
  writePolicies.set(table, policy)
}

/** The declared write policy of `table`, if any. */
export function writePolicyOf(table: Table): ModelWritePolicy | undefined {
  return writePolicies.get(table)
}
