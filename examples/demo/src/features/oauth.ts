import type { Hono } from 'hono'
import type { KeyValueStore } from 'kilnjs/core'
import { createAuditLog, durableState } from 'kilnjs/db'
import {
  createBearerValidator,
  loadOAuthConfig,
  type OAuthConfig,
  oauthServer,
  type ValidateBearer,
} from 'kilnjs/oauth'
import { userCredentialStamp } from '../auth.ts'
import type { DemoContext } from '../context.ts'
import { demoDataTools } from './data-tools.ts'

export interface DemoOAuth {
  config: OAuthConfig
  /** The canonical MCP URL: the audience of every token. */
  resource: string
  resourceMetadataUrl: string
  /** Validates bearer tokens for `/mcp` (revocations included, through `state`). */
  validator: ValidateBearer
  /** Token families, grants and revocations: on Redis, or without it in the database. */
  state: KeyValueStore
}

const configured = new WeakMap<DemoContext, DemoOAuth>()

/**
 * The demo's OAuth settings, read once per context from MCP_TOKEN_SECRET and APP_URL. In
 * development a missing secret is generated (with a warning); in production both are required.
 * The MCP feature uses the same validator.
 */
export function demoOAuth(ctx: DemoContext): DemoOAuth {
  let oauth = configured.get(ctx)
  if (!oauth) {
    const config = loadOAuthConfig(ctx.env, {
      production: ctx.config.env === 'production',
      fallbackUrl: ctx.config.appUrl,
      logger: ctx.logger,
    })
    ctx.redactor.add(config.secret)
    const resource = `${config.issuer}/mcp`
    const state = durableState(ctx.shared, ctx.database)
    oauth = {
      state,
      config,
      resource,
      resourceMetadataUrl: `${config.issuer}/.well-known/oauth-protected-resource/mcp`,
      validator: createBearerValidator({
        secret: config.secret,
        issuer: config.issuer,
        resource,
        store: state,
        // A deleted user, or a new password, ends their access tokens at once.
        credentialStamp: userCredentialStamp(ctx.database),
      }),
    }
    configured.set(ctx, oauth)
  }
  return oauth
}

/** Mounts the authorization server: discovery, /register, /authorize, /token, /device. */
export function mountOAuth(app: Hono, ctx: DemoContext): void {
  const { config, state } = demoOAuth(ctx)
  app.route(
    '/',
    oauthServer({
      database: ctx.database,
      store: state,
      secret: config.secret,
      issuer: config.issuer,
      loginPath: '/login',
      appName: ctx.config.appName,
      // /mcp's tools check these per tool: crud_list needs mcp:read, the writing tools mcp:write.
      scopes: ['mcp:read', 'mcp:write'],
      // The consent page lists what the data tools allow; the person can grant less.
      describeAccess: () => demoDataTools(ctx).describeAccess(),
      // /connected-apps shows what each application did: the data tools' audit trail.
      activity: createAuditLog(ctx.database),
      logger: ctx.logger,
      rateLimiters: ctx.limiters,
      allowedOrigins: { hosts: ctx.config.allowedHosts },
      // …and their codes and refresh tokens: the same stamp the sessions are bound to.
      credentialStamp: userCredentialStamp(ctx.database),
      // Development only: lets a client metadata document be served from loopback (tests).
      clientIdMetadataDocuments: {
        allowLoopback:
          ctx.config.env !== 'production' && ctx.env.KILN_CIMD_ALLOW_LOOPBACK === 'true',
      },
      session: async (request) => {
        const session = await ctx.sessions.current(request)
        return session && { userId: session.userId, csrfToken: session.csrfToken }
      },
    }),
  )
}
