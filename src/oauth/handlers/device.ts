import type { Handler } from 'hono'
import type { LimitRequest } from '../../core/http/rate-limiters.ts'
import { limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthPageError } from '../errors.ts'
import { htmlResponse } from '../http/page-response.ts'
import { renderConsentPage } from '../pages/consent.ts'
import { renderDeviceEntryPage, renderDeviceResultPage } from '../pages/device.ts'
import { formatUserCode, normalizeUserCode } from '../protocol/user-code.ts'
import { resolveClient } from '../resolve-client.ts'
import { approvedGrant, consentOffer } from './grant-form.ts'
import { loginRedirect } from './login-redirect.ts'
import { readSessionForm } from './session-form.ts'

const WRONG_CODE = 'That code is not valid. Check the code on your device and try again.'

/**
 * GET /device: the verification page, with `user_code` pre-filled from the query (the
 * person still confirms it). Unauthenticated people go to login and come back.
 * @see RFC 8628 §3.3
 */
export function deviceHandler(ctx: OAuthContext): Handler {
  const action = new URL(ctx.endpoints.verification).pathname
  return async function devicePage(c) {
    const url = new URL(c.req.url)
    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, url.pathname + url.search)
    const typed = url.searchParams.get('user_code') ?? ''
    const normalized = normalizeUserCode(typed)
    return htmlResponse(
      renderDeviceEntryPage({
        action,
        csrfToken: session.csrfToken,
        userCode: normalized ? formatUserCode(normalized) : typed.slice(0, 20),
      }),
    )
  }
}

/**
 * POST /device: first the code (answered with the consent page), then the decision. The
 * user and tenant come from the session, never from the form. Wrong codes are counted per
 * session and per IP and answered with one generic message.
 */
export function deviceDecisionHandler(ctx: OAuthContext): Handler {
  const action = new URL(ctx.endpoints.verification).pathname
  return async function deviceDecision(c) {
    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, action, 303)
    const form = await readSessionForm(c, session)
    const throttles = [
      { name: 'oauth-user-code-user', request: limitRequest(c, ctx.limiters, session.userId) },
      { name: 'oauth-user-code-ip', request: limitRequest(c, ctx.limiters) },
    ]
    await countGuess(ctx, throttles)
    const typed = form.get('user_code') ?? ''
    const userCode = normalizeUserCode(typed)
    const found = userCode ? await ctx.devices.findByUserCode(userCode) : undefined
    const alreadyDecided = found ? (await ctx.devices.decision(found.hash)) !== undefined : false
    const wrong = () =>
      htmlResponse(
        renderDeviceEntryPage({
          action,
          csrfToken: session.csrfToken,
          userCode: typed.slice(0, 20),
          error: WRONG_CODE,
        }),
        400,
      )
    if (!found || !userCode || alreadyDecided) return wrong()
    for (const { name, request } of throttles) await ctx.limiters.refund(name, request)
    const decision = form.get('decision')
    if (decision === null) {
      const client = await resolveClient(ctx, found.grant.clientId, limitRequest(c, ctx.limiters))
      const hidden = { user_code: formatUserCode(userCode), csrf_token: session.csrfToken }
      return htmlResponse(deviceConsentPage(ctx, found.grant, client, action, hidden))
    }
    if (decision !== 'approve' && decision !== 'deny') {
      throw new OAuthPageError('invalid_request', 'Invalid request', 'Choose Approve or Deny.')
    }
    const approved = decision === 'approve'
    // Read before deciding: a form refused for its choices leaves the request undecided.
    const grant = approved ? approvedGrant(ctx, found.grant.scope, form) : undefined
    const recorded = await ctx.devices.decide(
      found.hash,
      grant
        ? {
            status: 'approved',
            userId: session.userId,
            tenantId: session.tenantId,
            approvedAt: ctx.clock.now(),
            credentialStamp: await ctx.stampOf(session.userId),
            ...grant,
          }
        : { status: 'denied' },
    )
    if (!recorded) return wrong()
    ctx.logger.info(
      { clientId: found.grant.clientId, userId: session.userId, approved },
      'oauth: device grant decided',
    )
    return htmlResponse(renderDeviceResultPage(approved))
  }
}

type Throttle = { name: string; request: LimitRequest }

/**
 * Each code is counted before it is looked up, so concurrent guesses each see their own count
 * (a right code gives its count back: only wrong ones are limited).
 */
async function countGuess(ctx: OAuthContext, throttles: Throttle[]): Promise<void> {
  let allowed = true
  for (const { name, request } of throttles) {
    if (!(await ctx.limiters.consume(name, request)).allowed) allowed = false
  }
  if (allowed) return
  throw new OAuthPageError(
    'too_many_requests',
    'Too many attempts',
    'Too many wrong codes. Wait a few minutes and try again.',
  )
}

/** The consent page for the device's pending grant, the code and CSRF token carried along. */
function deviceConsentPage(
  ctx: OAuthContext,
  grant: { clientId: string; scope: string[] },
  client: Awaited<ReturnType<typeof resolveClient>>,
  action: string,
  hidden: Record<string, string>,
): string {
  const { scopes, offer } = consentOffer(ctx, grant.scope)
  return renderConsentPage({
    appName: ctx.appName,
    clientName: client?.clientName,
    clientId: grant.clientId,
    redirectHost: undefined,
    scopes,
    scopeDescriptions: ctx.scopeDescriptions,
    verifiedHost: client?.verifiedHost,
    action,
    offer,
    hidden,
  })
}
