import { UnauthenticatedError } from '../core/errors.ts'

/** Why a key was refused. Logged, never sent to the client (no oracle for which keys exist). */
export type ApiKeyRejection =
  | 'missing'
  | 'malformed'
  | 'unknown'
  | 'revoked'
  | 'expired'
  | 'mismatch'
  | 'invalid_scopes'

/**
 * A presented API key was refused: a 401 `{ "error": "Unauthenticated" }` for every reason.
 * `reason` and `keyId` are for logs only.
 */
export class ApiKeyRejectedError extends UnauthenticatedError {
  readonly reason: ApiKeyRejection
  readonly keyId: number | undefined

  constructor(reason: ApiKeyRejection, keyId?: number) {
    super('Unauthenticated')
    this.reason = reason
    this.keyId = keyId
  }
}
