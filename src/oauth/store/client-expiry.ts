import type { OAuthContext } from '../context.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'

/** Registered clients that never got a token are removed after 30 days by default. */
export const UNUSED_CLIENT_TTL_MS = 30 * 24 * 3600_000
/** Registered clients that never got a token, kept at most by default. */
export const MAX_UNUSED_CLIENTS = 10_000
/** `last_used_at` is written at most once a day per client: a token is not a database write. */
const MARK_USED_EVERY_MS = 24 * 3600_000
/** One sweep removes at most this many clients, so a registration stays cheap. */
const SWEEP_LIMIT = 50

type ExpiryContext = Pick<
  OAuthContext,
  'clients' | 'clock' | 'logger' | 'unusedClientTtlMs' | 'maxUnusedClients'
>

/** The `maxUnusedClients` option, checked: a whole number, 1 or more. */
export function maxUnusedClients(value: number = MAX_UNUSED_CLIENTS): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`maxUnusedClients must be a whole number, 1 or more (got ${value})`)
  }
  return value
}

/**
 * Before a registration is stored: when `maxUnusedClients` clients never got a token, the
 * oldest of them are removed to make room. A client that got a token is never removed here.
 * What registration stores is bounded this way, not what is asked: a flood of valid
 * registrations churns through its own unused clients and the next client is still answered.
 */
export async function makeRoomForRegistration(ctx: ExpiryContext): Promise<void> {
  if (!ctx.clients.countUnused || !ctx.clients.pruneUnused) return
  const excess = (await ctx.clients.countUnused()) - ctx.maxUnusedClients + 1
  if (excess <= 0) return
  // Every unused client is older than a day from now (the clock the registrations are dated by).
  const everyUnused = new Date(ctx.clock.now() + MARK_USED_EVERY_MS)
  const removed = await ctx.clients.pruneUnused(everyUnused, excess)
  ctx.logger.debug({ removed }, 'oauth: oldest unused clients removed to make room')
}

/** After a token is issued to a registered client: records the use, at most once a day. */
export async function noteClientUsed(ctx: ExpiryContext, client: RegisteredClient) {
  if (!ctx.clients.markUsed || client.verifiedHost !== undefined) return
  const now = ctx.clock.now()
  if (client.lastUsedAt !== undefined && now - client.lastUsedAt < MARK_USED_EVERY_MS) return
  try {
    await ctx.clients.markUsed(client.clientId, new Date(now))
  } catch (error) {
    // The tokens are issued already; a missed mark only makes the client look unused longer.
    ctx.logger.warn({ err: error, clientId: client.clientId }, 'oauth: could not mark client used')
  }
}

/**
 * Removes registered clients that never got a token within `unusedClientTtlMs` (bounded,
 * oldest first). Runs on each registration, so the table is swept as fast as it can grow. A
 * failed sweep is logged: it must not cost the new client its registration.
 */
export async function sweepUnusedClients(ctx: ExpiryContext): Promise<void> {
  if (ctx.unusedClientTtlMs === false || !ctx.clients.pruneUnused) return
  try {
    const before = new Date(ctx.clock.now() - ctx.unusedClientTtlMs)
    const removed = await ctx.clients.pruneUnused(before, SWEEP_LIMIT)
    if (removed > 0) ctx.logger.info({ removed }, 'oauth: unused clients removed')
  } catch (error) {
    ctx.logger.warn({ err: error }, 'oauth: could not remove unused clients')
  }
}
