import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import type { Hono } from 'hono'
import { signIn } from '../demo/support.ts'
import { HeadlessOAuthProvider } from '../mcp/support/http-app.ts'

/**
 * An access token for the demo's /mcp at `origin`, as an MCP client gets one: the user signs
 * in, the client registers itself (DCR), the user approves it on the consent page, and the
 * client exchanges the code. Each call registers a new client.
 */
export async function demoAccessToken(
  app: Hono,
  origin: string,
  email: string,
  password: string,
): Promise<string> {
  const jar = await signIn(app, email, password)
  const provider = new HeadlessOAuthProvider(jar.header())
  const serverUrl = `${origin}/mcp`
  if ((await auth(provider, { serverUrl })) !== 'REDIRECT') {
    throw new Error('expected the authorization redirect')
  }
  const authorized = await auth(provider, { serverUrl, authorizationCode: provider.code! })
  if (authorized !== 'AUTHORIZED') throw new Error('the code exchange failed')
  return provider.tokens()!.access_token
}
