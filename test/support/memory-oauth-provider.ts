import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'

/**
 * The MCP SDK's OAuth client provider, kept in memory as an MCP client application keeps it:
 * its registration, tokens and PKCE verifier. `redirectToAuthorization` only keeps the URL
 * (`authorizationUrl`) for the test to open, in Chromium or with fetch; a subclass may follow
 * it itself. `metadata` is merged into the registration (a `client_name`, a `scope`).
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  authorizationUrl: URL | undefined

  constructor(
    readonly redirectUrl: string,
    private readonly metadata: Partial<OAuthClientMetadata> = {},
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP SDK client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL): void | Promise<void> {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}
