import { OAuthError } from '../errors.ts'
import { displayName } from './display-name.ts'
import { DEVICE_CODE_GRANT } from './metadata.ts'
import { redirectUriProblem } from './redirect-uri.ts'

/** A registered client, as the server uses it. All clients are public. */
export interface RegisteredClient {
  clientId: string
  clientName: string | undefined
  redirectUris: string[]
  grantTypes: string[]
  responseTypes: string[]
  applicationType: 'web' | 'native' | undefined
  scope: string | undefined
  /** The registration request as sent (minus secrets), echoed in the response. */
  metadata: Record<string, unknown>
  /** Seconds since the epoch. */
  issuedAt: number
  /** When the client last got a token (ms since the epoch; registered clients only). */
  lastUsedAt?: number | undefined
  /**
   * For a client identified by its metadata document's URL (CIMD): that URL's host, which
   * the client proved it controls by serving the document. Undefined for registered clients.
   */
  verifiedHost?: string | undefined
}

/** Stored metadata per client is bounded: registration is public. */
export const MAX_METADATA_CHARS = 8 * 1024

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token', DEVICE_CODE_GRANT])
/** Asked for by some clients that cannot do `none`; registered as public clients anyway. */
const DOWNGRADED_AUTH_METHODS = new Set(['none', 'client_secret_post', 'client_secret_basic'])
const DROPPED_FIELDS = [
  'client_id',
  'client_secret',
  'client_secret_expires_at',
  'client_id_issued_at',
  'registration_access_token',
  'registration_client_uri',
]

/**
 * Validates a registration request. Lenient where clients differ (unknown fields pass through;
 * `client_secret_post` becomes `none`), strict where it matters (redirect URIs, grant and
 * response types). @see RFC 7591 §2, §3.2.2
 */
export function parseClientMetadata(
  body: unknown,
  identity: { clientId: string; issuedAt: number },
): RegisteredClient {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object')
  }
  const input = body as Record<string, unknown>
  const grantTypes = stringList(input.grant_types, 'grant_types') ?? ['authorization_code']
  for (const grant of grantTypes) {
    if (!GRANT_TYPES.has(grant)) {
      throw new OAuthError('invalid_client_metadata', `Unsupported grant type: ${grant}`)
    }
  }
  const usesRedirects = grantTypes.includes('authorization_code')
  const responseTypes =
    stringList(input.response_types, 'response_types') ?? (usesRedirects ? ['code'] : [])
  if (responseTypes.some((type) => type !== 'code')) {
    throw new OAuthError('invalid_client_metadata', 'Only the response type "code" is supported')
  }
  if (usesRedirects && !responseTypes.includes('code')) {
    throw new OAuthError(
      'invalid_client_metadata',
      'authorization_code needs the response type "code"',
    )
  }
  const redirectUris = redirectUriList(input.redirect_uris, usesRedirects)
  const method = input.token_endpoint_auth_method ?? 'none'
  if (typeof method !== 'string' || !DOWNGRADED_AUTH_METHODS.has(method)) {
    throw new OAuthError(
      'invalid_client_metadata',
      'token_endpoint_auth_method must be "none": this server registers public clients',
    )
  }
  const applicationType = input.application_type
  if (applicationType !== undefined && applicationType !== 'web' && applicationType !== 'native') {
    throw new OAuthError('invalid_client_metadata', 'application_type must be "web" or "native"')
  }
  const clientName = optionalString(input.client_name, 'client_name', 200)
  const scope = optionalString(input.scope, 'scope', 1000)
  const metadata: Record<string, unknown> = { ...input }
  for (const field of DROPPED_FIELDS) delete metadata[field]
  if (JSON.stringify(metadata).length > MAX_METADATA_CHARS) {
    throw new OAuthError(
      'invalid_client_metadata',
      `The client metadata is larger than ${MAX_METADATA_CHARS} characters`,
    )
  }
  return {
    clientId: identity.clientId,
    clientName: displayName(clientName),
    redirectUris,
    grantTypes,
    responseTypes,
    applicationType,
    scope,
    metadata,
    issuedAt: identity.issuedAt,
  }
}

/** The registration response: the metadata as registered, the id, and `none`. @see RFC 7591 §3.2.1 */
export function registrationResponse(client: RegisteredClient): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...client.metadata,
    client_id: client.clientId,
    client_id_issued_at: client.issuedAt,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: 'none',
  }
  if (client.clientName !== undefined) body.client_name = client.clientName
  if (client.applicationType !== undefined) body.application_type = client.applicationType
  if (client.scope !== undefined) body.scope = client.scope
  return body
}

function redirectUriList(value: unknown, required: boolean): string[] {
  if (value === undefined) {
    if (required) throw new OAuthError('invalid_redirect_uri', 'redirect_uris is required')
    return []
  }
  if (!Array.isArray(value) || (required && value.length === 0)) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URIs')
  }
  if (value.length > 20) throw new OAuthError('invalid_redirect_uri', 'Too many redirect_uris')
  for (const uri of value) {
    const problem = redirectUriProblem(uri)
    if (problem) {
      throw new OAuthError('invalid_redirect_uri', `Redirect URI ${JSON.stringify(uri)} ${problem}`)
    }
  }
  return [...new Set(value as string[])]
}

function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined
  if (
    !Array.isArray(value) ||
    value.some((item) => typeof item !== 'string') ||
    value.length > 10
  ) {
    throw new OAuthError('invalid_client_metadata', `${field} must be an array of strings`)
  }
  return [...new Set(value as string[])]
}

function optionalString(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || value.length > max) {
    throw new OAuthError(
      'invalid_client_metadata',
      `${field} must be a string of at most ${max} characters`,
    )
  }
  return value
}
