import type { Handler } from 'hono'
import { assertAllowed, limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { readForm, required, resources, single } from '../http/params.ts'
import { DEVICE_CODE_GRANT } from '../protocol/metadata.ts'
import { resolveResource } from '../protocol/resource.ts'
import { grantScopes } from '../protocol/scope.ts'
import { formatUserCode } from '../protocol/user-code.ts'
import { resolveClient } from '../resolve-client.ts'
import { DEVICE_INTERVAL_SECONDS, DEVICE_TTL_MS } from '../store/device-grants.ts'

/**
 * POST /device_authorization: public, no session. Answers a 256-bit device code, an
 * 8-letter user code shown `XXXX-XXXX`, the verification URIs, 600 s and 5 s.
 * @see RFC 8628 §3.1, §3.2
 */
export function deviceAuthorizationHandler(ctx: OAuthContext): Handler {
  return async function deviceAuthorization(c) {
    const requester = limitRequest(c, ctx.limiters)
    assertAllowed(await ctx.limiters.consume('oauth-device-authorization', requester))
    const form = await readForm(c)
    const client = await resolveClient(ctx, required(form, 'client_id'), requester)
    if (!client) throw new OAuthError('invalid_client', 'Unknown client')
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT)) {
      throw new OAuthError(
        'unauthorized_client',
        'This client is not registered for the device grant',
      )
    }
    const resource = resolveResource(resources(form), ctx.endpoints.resource)
    if (!resource) {
      throw new OAuthError('invalid_target', `The only resource here is ${ctx.endpoints.resource}`)
    }
    const scope = grantScopes(single(form, 'scope'), ctx.scopes)
    const { deviceCode, userCode } = await ctx.devices.create({
      clientId: client.clientId,
      scope,
      resource,
    })
    const shown = formatUserCode(userCode)
    const complete = new URL(ctx.endpoints.verification)
    complete.searchParams.set('user_code', shown)
    return c.json(
      {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: ctx.endpoints.verification,
        verification_uri_complete: complete.toString(),
        expires_in: DEVICE_TTL_MS / 1000,
        interval: DEVICE_INTERVAL_SECONDS,
      },
      200,
      { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
    )
  }
}
