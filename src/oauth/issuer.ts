import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/logger.ts'
import { OAuthError } from './errors.ts'
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from './protocol/access-token.ts'
import {
  type CredentialStamp,
  currentStampDigest,
  stampStillValid,
} from './protocol/credential-stamp.ts'
import { type RandomSource, randomToken } from './protocol/random.ts'
import { formatScope } from './protocol/scope.ts'
import type { GrantBinding } from './store/authorization-codes.ts'
import type { GrantIndex } from './store/grants.ts'
import { REFRESH_TTL_MS, type TokenFamilies } from './store/token-families.ts'

export interface IssueOptions {
  /** The token family (grant) every token of this authorization belongs to. */
  familyId: string
  /** Whether to mint a refresh token too. */
  refresh: boolean
  grant: 'authorization_code' | 'device_code' | 'refresh_token'
  /** A narrower scope for this access token (refresh with `scope`). */
  accessScope?: string[]
  /** Shown on the person's list of connected applications. */
  client?: { name: string | undefined; verifiedHost: string | undefined }
}

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
  readonly #grants: GrantIndex
  readonly #logger: Logger
  readonly #credentialStamp: CredentialStamp | undefined

  constructor(options: {
    key: Uint8Array
    issuer: string
    clock: Clock
    random: RandomSource
    families: TokenFamilies
    grants: GrantIndex
    logger: Logger
    credentialStamp?: CredentialStamp | undefined
  }) {
    this.#key = options.key
    this.#issuer = options.issuer
    this.#clock = options.clock
    this.#random = options.random
    this.#families = options.families
    this.#grants = options.grants
    this.#logger = options.logger
    this.#credentialStamp = options.credentialStamp
  }

  /**
   * Mints the tokens of a grant. A new grant is listed under its user first, then checked
   * against the user's cut-off (all grants ended after this approval): whichever of the two
   * runs second sees the other, so no token outlives `revokeAllForUser`.
   */
  async issue(binding: GrantBinding, options: IssueOptions): Promise<TokenResponse> {
    const lifetimeMs = options.refresh ? REFRESH_TTL_MS : ACCESS_TOKEN_TTL_SECONDS * 1000
    if (options.grant === 'refresh_token') {
      await this.#grants.touch(options.familyId, lifetimeMs)
    } else {
      await this.#grants.add(
        {
          grantId: options.familyId,
          userId: binding.userId,
          tenantId: binding.tenantId,
          clientId: binding.clientId,
          clientName: options.client?.name,
          verifiedHost: options.client?.verifiedHost,
          scope: binding.scope,
          grant: binding.grant,
          credentialStamp: binding.credentialStamp,
        },
        lifetimeMs,
      )
    }
    if (await this.#grants.approvedBeforeCutoff(binding.userId, binding.approvedAt)) {
      await this.#families.revoke(options.familyId)
      throw new OAuthError('invalid_grant', 'The authorization was revoked')
    }
    if (this.#credentialStamp) {
      const current = await currentStampDigest(this.#credentialStamp, binding.userId)
      if (!stampStillValid(current, binding.credentialStamp)) {
        await this.#grants.revokeById(options.familyId)
        throw new OAuthError(
          'invalid_grant',
          'The user was deleted or changed their password; the authorization has ended',
        )
      }
    }
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
        grant_id: options.familyId,
        ...(binding.tenantId !== undefined ? { tenant_id: binding.tenantId } : {}),
        ...(binding.grant !== undefined ? { grant: binding.grant } : {}),
      },
      this.#key,
    )
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
