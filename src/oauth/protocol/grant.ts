/** What a person can let a client do with one model. */
export const GRANT_ACTIONS = ['read', 'create', 'update', 'delete'] as const
/** What a grant may let an assistant do to a model. */
export type GrantAction = (typeof GRANT_ACTIONS)[number]

/** One model and the actions the app lets assistants take on it. */
export interface GrantableModel {
  /** The model's resource name (`posts`). */
  model: string
  actions: readonly GrantAction[]
}

/**
 * What the app lets assistants do, as the consent page offers it: the models and their
 * actions, and the scope reading needs and the one writing (create, update, delete) needs.
 * The app describes it (kilnjs/mcp `DataTools.describeAccess()`); the server only shows it.
 */
export interface GrantableAccess {
  scopes: { read: string; write: string }
  models: readonly GrantableModel[]
}

/**
 * What a person approved: per model, the actions granted. Carried by the code, the refresh
 * token and every access token of the grant (the `grant` claim); a model it does not name is
 * not granted.
 */
export type AccessGrant = Readonly<Record<string, readonly GrantAction[]>>

/** The scope an action needs. */
export function scopeOfAction(access: GrantableAccess, action: GrantAction): string {
  return action === 'read' ? access.scopes.read : access.scopes.write
}

/** The consent page's offer: each model's actions whose scope the client asked for. */
export function offeredAccess(access: GrantableAccess, requested: readonly string[]): AccessGrant {
  const offer: Record<string, GrantAction[]> = {}
  for (const { model, actions } of access.models) {
    const asked = actions.filter((action) => requested.includes(scopeOfAction(access, action)))
    if (asked.length > 0) offer[model] = GRANT_ACTIONS.filter((action) => asked.includes(action))
  }
  return offer
}

/**
 * The scopes a grant carries: the read and write scopes only when an action of the grant
 * needs them (a write scope with nothing to write is never asked for nor granted); any other
 * scope as requested.
 */
export function scopesForGrant(
  access: GrantableAccess,
  requested: readonly string[],
  grant: AccessGrant,
): string[] {
  const needed = new Set(
    Object.values(grant).flatMap((actions) =>
      actions.map((action) => scopeOfAction(access, action)),
    ),
  )
  const { read, write } = access.scopes
  return requested.filter((scope) => (scope !== read && scope !== write) || needed.has(scope))
}

/** The value of one permission's checkbox on the consent page. */
export const grantChoice = (model: string, action: GrantAction) => `${model}:${action}`

/** The grant from the ticked choices, within the offer (anything else is ignored). */
export function chosenGrant(offer: AccessGrant, ticked: readonly string[]): AccessGrant {
  const chosen = new Set(ticked)
  const grant: Record<string, GrantAction[]> = {}
  for (const [model, actions] of Object.entries(offer)) {
    const kept = actions.filter((action) => chosen.has(grantChoice(model, action)))
    if (kept.length > 0) grant[model] = kept
  }
  return grant
}

/** True when `grant` is a well-formed grant (read from a token or a store). */
export function isAccessGrant(grant: unknown): grant is AccessGrant {
  if (typeof grant !== 'object' || grant === null || Array.isArray(grant)) return false
  return Object.values(grant).every(
    (actions) =>
      Array.isArray(actions) &&
      actions.every((action) => (GRANT_ACTIONS as readonly unknown[]).includes(action)),
  )
}
