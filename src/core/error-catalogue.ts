/**
 * Every code a `KilnError` can carry, with the HTTP status it answers and its public message
 * (the message a class uses when it is given none). Capabilities declare their codes here and
 * take their statuses from here: nothing else maps an error to a status. `docs/errors.md` is
 * checked against this table. @see ./errors.ts
 */

/** One code's entry in the catalogue: its HTTP status, public message and where it arises. */
export interface ErrorCatalogueEntry {
  status: number
  message: string
  /** Where the error arises, for docs/errors.md. */
  arises: string
}

/** The catalogue: each `KilnErrorCode` with its status, public message and origin. */
export const ERROR_CATALOGUE = {
  // Core: any app's requests.
  bad_request: {
    status: 400,
    message: 'Bad Request',
    arises: 'A malformed request: a JSON body that does not parse, a bad query parameter.',
  },
  invalid_json: {
    status: 400,
    message: 'Invalid JSON',
    arises: 'A body that is not JSON (the messaging webhook; the MCP endpoint, as `-32700`).',
  },
  request_aborted: {
    status: 400,
    message: 'Bad Request: the request body was not received in full',
    arises: 'The client closed the connection before its body arrived, or while its query ran.',
  },
  unauthenticated: {
    status: 401,
    message: 'Unauthenticated',
    arises: 'No credentials, or credentials refused (an API key, a session, a login form).',
  },
  forbidden: {
    status: 403,
    message: 'Forbidden',
    arises: 'A missing scope, a foreign `Origin`, a refused form or subscription handshake.',
  },
  not_found: {
    status: 404,
    message: 'Not Found',
    arises: 'No record with this identifier; no such route.',
  },
  method_not_allowed: {
    status: 405,
    message: 'Method Not Allowed',
    arises: 'GET or DELETE on the stateless MCP endpoint (with `Allow: POST`).',
  },
  conflict: {
    status: 409,
    message: 'Conflict',
    arises: 'A unique value taken, a record still referenced, an idempotent request in progress.',
  },
  precondition_failed: {
    status: 412,
    message: 'Precondition Failed',
    arises: 'An `If-Match` that names another version of the record.',
  },
  payload_too_large: {
    status: 413,
    message: 'Payload Too Large',
    arises: 'A body over the route’s limit, refused before it is read in full.',
  },
  unsupported_media_type: {
    status: 415,
    message: 'Unsupported Media Type',
    arises: 'A body that is not `application/json` where JSON is expected.',
  },
  validation_failed: {
    status: 422,
    message: 'Validation failed',
    arises: 'A body or query that fails its schema; `errors` names each field.',
  },
  too_many_requests: {
    status: 429,
    message: 'Too Many Requests',
    arises: 'A rate limit reached; `Retry-After` says when to try again.',
  },
  internal_error: {
    status: 500,
    message: 'Internal Server Error',
    arises: 'Any failure that is not a client’s: logged with its stack, answered without it.',
  },
  dependency_failed: {
    status: 500,
    message: 'A dependency failed',
    arises: 'The database, Redis or a provider API failed; logged with its cause.',
  },
  config_invalid: {
    status: 500,
    message: 'Invalid configuration',
    arises: 'Environment variables missing or malformed, at start-up (`parseEnv`).',
  },
  service_unavailable: {
    status: 503,
    message: 'Service Unavailable',
    arises: 'The server cannot answer now, though it may later.',
  },
  database_not_migrated: {
    status: 503,
    message: 'Service Unavailable: the database is not migrated',
    arises: 'A query on a table the database does not have (run the migrations).',
  },
  dependency_unavailable: {
    status: 503,
    message: 'Service Unavailable: a dependency did not answer',
    arises:
      'The database or Redis did not answer within its time budget, or refused the connection; `Retry-After` is set and the outage is logged once.',
  },
  query_timeout: {
    status: 503,
    message: 'Service Unavailable: the query took longer than its budget',
    arises: 'A list, search or aggregate query past its statement timeout.',
  },

  // OAuth: the RFC strings, answered as `{ error, error_description }`.
  invalid_request: {
    status: 400,
    message: 'The request is missing a parameter or is otherwise malformed.',
    arises: 'OAuth: any endpoint (RFC 6749 §5.2); also the browser pages of a bad form.',
  },
  invalid_client: {
    status: 401,
    message: 'Client authentication failed.',
    arises: 'OAuth token endpoint: an unknown client or a wrong secret (RFC 6749 §5.2).',
  },
  invalid_grant: {
    status: 400,
    message: 'The grant is invalid, expired or revoked.',
    arises: 'OAuth token endpoint: a code, refresh token or verifier that does not match.',
  },
  unauthorized_client: {
    status: 400,
    message: 'The client may not use this grant type.',
    arises: 'OAuth token and authorize endpoints (RFC 6749 §5.2).',
  },
  unsupported_grant_type: {
    status: 400,
    message: 'The grant type is not supported.',
    arises: 'OAuth token endpoint (RFC 6749 §5.2).',
  },
  unsupported_response_type: {
    status: 400,
    message: 'The response type is not supported.',
    arises: 'OAuth authorize endpoint, as a redirect (RFC 6749 §4.1.2.1).',
  },
  invalid_scope: {
    status: 400,
    message: 'The requested scope is invalid or unknown.',
    arises: 'OAuth authorize, token and device endpoints (RFC 6749 §5.2).',
  },
  access_denied: {
    status: 400,
    message: 'The person denied the request.',
    arises: 'OAuth authorize (as a redirect) and device polling (RFC 8628 §3.5).',
  },
  server_error: {
    status: 500,
    message: 'The authorization server failed.',
    arises: 'OAuth: an unexpected failure while answering (RFC 6749 §4.1.2.1).',
  },
  temporarily_unavailable: {
    status: 503,
    message: 'The authorization server is temporarily unavailable.',
    arises: 'OAuth: a dependency is down; try again later.',
  },
  invalid_redirect_uri: {
    status: 400,
    message: 'The redirect URI is invalid.',
    arises: 'OAuth registration (RFC 7591 §3.2.2) and the authorize page.',
  },
  invalid_client_metadata: {
    status: 400,
    message: 'The client metadata is invalid.',
    arises: 'OAuth dynamic registration and client ID metadata documents (RFC 7591 §3.2.2).',
  },
  authorization_pending: {
    status: 400,
    message: 'The person has not answered yet.',
    arises: 'OAuth device polling (RFC 8628 §3.5).',
  },
  slow_down: {
    status: 400,
    message: 'Poll less often.',
    arises: 'OAuth device polling faster than its interval (RFC 8628 §3.5).',
  },
  expired_token: {
    status: 400,
    message: 'The device code has expired.',
    arises: 'OAuth device polling (RFC 8628 §3.5).',
  },
  invalid_target: {
    status: 400,
    message: 'The resource is invalid or unknown.',
    arises: 'OAuth authorize and token endpoints: a `resource` not served here (RFC 8707 §2).',
  },
  invalid_token: {
    status: 401,
    message: 'The access token is invalid or expired.',
    arises: 'A protected resource route, with a `WWW-Authenticate` challenge (RFC 6750 §3.1).',
  },
  insufficient_scope: {
    status: 403,
    message: 'The access token lacks a scope this route needs.',
    arises: 'A protected resource route, naming the scope (RFC 6750 §3.1).',
  },
  unknown_client: {
    status: 400,
    message: 'This application is not registered here.',
    arises: 'OAuth authorize page: a `client_id` missing, repeated or unknown.',
  },

  // Messaging.
  invalid_signature: {
    status: 401,
    message: 'Invalid signature',
    arises: 'Messaging webhook: `x-hub-signature-256` does not match the body.',
  },
  queue_error: {
    status: 500,
    message: 'Queue error',
    arises: 'Messaging webhook: queuing the delivery failed; the provider retries it.',
  },
  messaging_failed: {
    status: 502,
    message: 'Sending the message failed',
    arises: 'Messaging: a send failed (network, an unreadable answer).',
  },
  messaging_api_error: {
    status: 502,
    message: 'The messaging provider answered with an error',
    arises: 'Messaging: the Graph API answered with an error body.',
  },
  messaging_throttled: {
    status: 502,
    message: 'The messaging provider throttled the send',
    arises: 'Messaging: 130429 or 131056, still failing after the bounded retries.',
  },
  messaging_reengagement_required: {
    status: 502,
    message: 'Only a template message can reach this customer now',
    arises: 'Messaging: 131047, more than 24 hours since the customer last wrote.',
  },
  messaging_token_expired: {
    status: 502,
    message: 'The messaging access token expired or was revoked',
    arises: 'Messaging: 190; mint a new permanent token.',
  },
  messaging_timeout: {
    status: 502,
    message: 'The messaging provider did not answer in time',
    arises: 'Messaging: the Graph API did not answer within the timeout (not retried).',
  },

  // Storage.
  invalid_path: {
    status: 400,
    message: 'Invalid path',
    arises: 'Storage: a path that is absolute, climbs out of the disk or holds a control byte.',
  },
  file_not_found: {
    status: 404,
    message: 'File not found',
    arises: 'Storage: no file at the path.',
  },
  unknown_disk: {
    status: 404,
    message: 'Unknown disk',
    arises: 'Storage: a disk name that is not configured.',
  },
  storage_io: {
    status: 500,
    message: 'Storage failed',
    arises: 'Storage: the file system or the object store failed.',
  },
  storage_unsupported: {
    status: 501,
    message: 'Not supported by this disk',
    arises: 'Storage: an operation the disk’s driver does not offer.',
  },

  // CDN.
  invalid_purge_path: {
    status: 400,
    message: 'Invalid purge path',
    arises: 'CDN: a purge path that is not an absolute path on the site.',
  },
  cdn_purge_failed: {
    status: 502,
    message: 'CDN purge failed',
    arises: 'CDN: the provider refused or failed some purge requests.',
  },
} as const satisfies Record<string, ErrorCatalogueEntry>

/** Every code a `KilnError` carries: a closed list, each with its status and message. */
export type KilnErrorCode = keyof typeof ERROR_CATALOGUE

/** The HTTP status of an error code. */
export function statusOf(code: KilnErrorCode): number {
  return ERROR_CATALOGUE[code].status
}

/** The public message of an error code: what the error says when it is given no message. */
export function messageOf(code: KilnErrorCode): string {
  return ERROR_CATALOGUE[code].message
}

/**
 * The code that answers a bare status (a Hono `HTTPException`, a response kiln did not make
 * itself): its message when the exception has none, and the body's `code`.
 */
const GENERIC_BY_STATUS: Record<number, KilnErrorCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  500: 'internal_error',
}

/** The code of a bare status: its generic code, else `bad_request` or `internal_error`. */
export function codeOfStatus(status: number): KilnErrorCode {
  return GENERIC_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request')
}

/** The message answering a bare status: its generic code's, else `Error`. */
export function messageOfStatus(status: number): string {
  const code = GENERIC_BY_STATUS[status]
  return code === undefined ? 'Error' : messageOf(code)
}
