import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/logger.ts'
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from './protocol/access-token.ts'
import { type RandomSource, randomToken } from './protocol/random.ts'
import { formatScope } from './protocol/scope.ts'
import type { GrantBinding } from './store/authorization-codes.ts'
import type { TokenFamilies } from './store/token-families.ts'

/** The token response of both grants. @see RFC 6749 §5.1 */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
  refresh_token?: string
}

/**
 * The one issuer: authorization code, device code and refresh all end here, so every token
 * has the same claims, lifetime, audience binding and tenant scoping.
 */
export class TokenIssuer {
  readonly #key: Uint8Array
  readonly #issuer: string
  readonly #clock: Clock
  readonly #random: RandomSource
  readonly #families: TokenFamilies
  readonly #logger: Logger

  constructor(options: {
    key: Uint8Array
    issuer: string
    clock: Clock
    random: RandomSource
    families: TokenFamilies
    logger: Logger
  }) {
    this.#key = options.key
    this.#issuer = options.issuer
    this.#clock = options.clock
    this.#random = options.random
    this.#families = options.families
    this.#logger = options.logger
  }

  async issue(
    binding: GrantBinding,
    options: { familyId: string; refresh: boolean; grant: string; accessScope?: string[] },
  ): Promise<TokenResponse> {
    const iat = Math.floor(this.#clock.now() / 1000)
    const exp = iat + ACCESS_TOKEN_TTL_SECONDS
    const jti = randomToken(this.#random, 16)
    const scope = formatScope(options.accessScope ?? binding.scope)
    const accessToken = await signAccessToken(
      {
        iss: this.#issuer,
        sub: binding.userId,
        aud: binding.resource,
        client_id: binding.clientId,
        scope,
        iat,
        exp,
        jti,
        ...(binding.tenantId !== undefined ? { tenant_id: binding.tenantId } : {}),
      },
      this.#key,
    )
    await this.#families.recordAccessToken(options.familyId, { jti, expiresAt: exp * 1000 })
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope,
    }
    if (options.refresh) {
      response.refresh_token = await this.#families.issueRefreshToken(options.familyId, binding)
    }
    this.#logger.info(
      { clientId: binding.clientId, userId: binding.userId, grant: options.grant, jti },
      'oauth: access token issued',
    )
    return response
  }
}
