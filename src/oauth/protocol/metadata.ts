/** The absolute URLs of the server's endpoints, derived once from the issuer. */
export interface Endpoints {
  issuer: string
  authorization: string
  token: string
  registration: string
  revocation: string
  deviceAuthorization: string
  verification: string
  /** The signed-in person's list of connected applications. */
  connectedApps: string
  /** The canonical MCP URL: absolute, no fragment, no trailing slash. */
  resource: string
  /** `/.well-known/oauth-protected-resource/<resource path>`. @see RFC 9728 §3.1 */
  resourceMetadata: string
}

export function endpointsFor(issuer: string, resourcePath: string): Endpoints {
  const path = `/${resourcePath.replace(/^\/+|\/+$/g, '')}`
  return {
    issuer,
    authorization: `${issuer}/authorize`,
    token: `${issuer}/token`,
    registration: `${issuer}/register`,
    revocation: `${issuer}/revoke`,
    deviceAuthorization: `${issuer}/device_authorization`,
    verification: `${issuer}/device`,
    connectedApps: `${issuer}/connected-apps`,
    resource: `${issuer}${path}`,
    resourceMetadata: `${issuer}/.well-known/oauth-protected-resource${path}`,
  }
}

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/**
 * Authorization-server metadata: the fields of the spec, plus `scopes_supported`, RFC 9207's
 * `authorization_response_iss_parameter_supported`, RFC 7009's revocation endpoint and
 * client ID metadata documents. `grant_types_supported` lists `refresh_token` beside the
 * spec's two grants because `/token` issues and accepts refresh tokens. @see RFC 8414 §2
 */
export function authorizationServerMetadata(
  endpoints: Endpoints,
  scopes: string[],
  clientIdMetadataDocuments: boolean,
) {
  return {
    issuer: endpoints.issuer,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    registration_endpoint: endpoints.registration,
    revocation_endpoint: endpoints.revocation,
    revocation_endpoint_auth_methods_supported: ['none'],
    device_authorization_endpoint: endpoints.deviceAuthorization,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', DEVICE_CODE_GRANT, 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: clientIdMetadataDocuments,
  }
}

/** Protected-resource metadata of the MCP endpoint. @see RFC 9728 §2 */
export function protectedResourceMetadata(endpoints: Endpoints, scopes: string[]) {
  return {
    resource: endpoints.resource,
    authorization_servers: [endpoints.issuer],
    scopes_supported: scopes,
    bearer_methods_supported: ['header'],
  }
}
