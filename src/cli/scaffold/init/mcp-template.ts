import type { Dialect } from '../../../db/database.ts'

/** The app's user table, when it has an email and a password hash: the login reads it. */
export interface LoginTable {
  /** The name the schema module exports the table under. */
  exportName: string
  /** Drizzle property names of the primary key, the email and the password hash. */
  idKey: string
  emailKey: string
  passwordKey: string
  /** The primary key is a number (serial, integer): the session's string id is converted. */
  numericId: boolean
}

export interface McpModuleInput {
  dialect: Dialect
  /** The schema module as imported from the generated module: `./db/schema.js`. */
  schemaImport: string
  /** Every model's resource name, each listed (commented out) in the access policy. */
  resources: string[]
  users?: LoginTable | undefined
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const key = (name: string) => (IDENTIFIER.test(name) ? name : `'${name}'`)

/**
 * The module `kilnjs init:mcp` writes: sessions and the login page, the OAuth authorization
 * server and `/mcp` with the data tools, all from the entry point's config, behind an access
 * policy that reaches nothing until the developer uncomments a model.
 */
export function mcpModuleTemplate(input: McpModuleInput): string {
  const { dialect, users } = input
  const databaseType = dialect === 'postgres' ? 'PostgresDatabase' : 'SqliteDatabase'
  const session = [
    'createSessionStore',
    'loginRoutes',
    users ? 'passwordUsers' : 'type VerifyCredentials',
  ]
  const policy = input.resources.map(
    (resource) => `    // ${key(resource)}: { tools: ['crud_list'] },`,
  )
  return `${users ? "import { eq, type SQL } from 'drizzle-orm'\n" : ''}import type { Hono } from 'hono'
import type { AppConfig, Logger, RateLimiters, SharedState } from 'kilnjs/core'
import { createAuditLog, createModelRegistry, durableState, type ${databaseType} } from 'kilnjs/db'
import {
  approvalPages,
  createAuditTrail,
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  mcpEndpoint,
} from 'kilnjs/mcp'
import { createBearerValidator, loadOAuthConfig, oauthServer } from 'kilnjs/oauth'
import { ${session.join(', ')} } from 'kilnjs/session'
import * as schema from '${input.schemaImport}'

/** What the entry point already opened: its config, logger, database, shared state and limiters. */
export interface McpContext {
  config: AppConfig
  logger: Logger
  database: ${databaseType}
  shared: SharedState
  limiters: RateLimiters
}

/**
 * What assistants may reach through /mcp, acting as the user who approved them. Nothing until
 * you uncomment a model. \`tools\` is what an assistant may do with it: crud_list reads, and
 * crud_create, crud_update and crud_delete write (e.g. \`tools: ['crud_list', 'crud_create'],
 * write: ['title', 'body']\`); \`read\` narrows the fields it sees. Credential columns (password
 * hashes, tokens) are left out unless you name them. \`authorize\` can refuse single calls.
 * A crud_delete runs only once the signed-in user approved it (\`approval\`, default
 * \`['crud_delete']\`) on /approvals/<id>, which their client opens or links to.
 */
export const mcpAccess: McpAccessOptions = {
  unlisted: 'none',
  models: {
${policy.join('\n')}
  },
}
${
  users
    ? ''
    : `
/**
 * Who may sign in on the login page: the user's id when the email and password are right,
 * undefined otherwise. No table with an email and a password hash was found in your schema, so
 * nobody can sign in until you write this check against your own users (\`createPasswordHasher()\`
 * of kilnjs/session verifies a hash it wrote), or replace \`loginRoutes\` and \`session\` below with
 * your app's own login and sessions.
 */
export const verifyCredentials: VerifyCredentials = async () => undefined
`
}
${mountMcpTemplate(input)}`
}

/** \`mountMcp\`: sign-in, the authorization server, the approval pages and \`/mcp\`. */
function mountMcpTemplate({ dialect, users }: McpModuleInput): string {
  return `/**
 * Sign-in, the OAuth 2.1 authorization server and the MCP endpoint:
 * - \`/login\`, \`/logout\`: kiln's login page, sessions in the shared store (Redis with REDIS_URL);
 * - \`/.well-known/…\`, \`/register\`, \`/authorize\`, \`/token\`, \`/revoke\`, \`/device\`,
 *   \`/connected-apps\`: where assistants register and a signed-in person approves them;
 * - \`/mcp\`: the data tools under \`mcpAccess\`, for the tokens this server issued.
 * - \`/approvals/<id>\`: where the signed-in user approves a call that needs it (a deletion).
 * Every tool call is audited; the consent page offers each model on its own; /connected-apps
 * shows each person what their apps did.
 * Reads MCP_TOKEN_SECRET (required in production) and APP_URL once, here.
 */
export function mountMcp(app: Hono, context: McpContext): { close(): Promise<void> } {
  const { config, logger, database, shared, limiters } = context
  const oauth = loadOAuthConfig(process.env, {
    production: config.env === 'production',
    fallbackUrl: config.appUrl,
    logger,
  })
  // Token families and revocations outlive a restart: on Redis, or without it in the database.
  const state = durableState(shared, database)
${users ? loginWithUserTable(users) : ''}  const sessions = createSessionStore({
    store: shared.kv,
    secure: config.appUrl.startsWith('https:'),${
      users
        ? `
    // A new password, or a deleted user, ends the user's sessions, grants and tokens at once.
    credentialStamp: accounts.credentialStamp,`
        : ''
    }
  })
  app.route(
    '/',
    loginRoutes({
      sessions,
      limiters,
      verifyCredentials${users ? ': accounts.verifyCredentials' : ''},
      appName: config.appName,
    }),
  )
  // Every call the tools make is recorded in kiln_mcp_audit (\`npx kilnjs audit\` reads it, and
  // /connected-apps shows each person what their apps did), written in batches off the call.
  const audit = createAuditTrail({ database, logger })
  const tools = createDataTools({
    database,
    models: createModelRegistry(schema, '${dialect}'),
    access: mcpAccess,
    logger,
    audit,
    // Calls waiting for the user's approval: in the shared store, decided on /approvals/<id>.
    approvals: { store: shared.kv, pageUrl: (id) => \`\${oauth.issuer}/approvals/\${id}\` },
  })
${endpointsTemplate(users)}  // Await on shutdown, before the database closes: it writes the audit entries still buffered.
  return { close: () => audit.close() }
}
`
}

/** The authorization server, the approval pages and \`/mcp\`, in \`mountMcp\`. */
function endpointsTemplate(users: LoginTable | undefined): string {
  return `  app.route(
    '/',
    oauthServer({
      database,
      store: state,
      secret: oauth.secret,
      issuer: oauth.issuer,
      appName: config.appName,
      // The data tools check these per tool: crud_list needs mcp:read, the writing tools mcp:write.
      scopes: ['mcp:read', 'mcp:write'],
      // The consent page offers mcpAccess model by model: the person can grant less.
      describeAccess: () => tools.describeAccess(),
      // /connected-apps shows what each application did, from the audit trail.
      activity: createAuditLog(database),
      rateLimiters: limiters,
      allowedOrigins: { hosts: config.allowedHosts },
      logger,${users ? '\n      credentialStamp: accounts.credentialStamp,' : ''}
      session: (request) => sessions.current(request),
    }),
  )

  const resource = \`\${oauth.issuer}/mcp\`
  app.route(
    '/',
    approvalPages({
      store: tools.approvals,
      // The page names the assistant by its registered name (oauth_clients).
      database,
      appUrl: oauth.issuer,
      appName: config.appName,
      allowedOrigins: { hosts: config.allowedHosts },
      logger,
      session: (request) => sessions.current(request),
    }),
  )
  app.route(
    '/mcp',
    mcpEndpoint({
      validator: createBearerValidator({
        secret: oauth.secret,
        issuer: oauth.issuer,
        resource,
        store: state,${users ? '\n        credentialStamp: accounts.credentialStamp,' : ''}
      }),
      resourceMetadataUrl: \`\${oauth.issuer}/.well-known/oauth-protected-resource/mcp\`,
      origins: { appUrl: config.appUrl, hosts: config.allowedHosts },
      logger,
      // A client's answer to an approval question reaches the waiting call on any instance.
      serverRequests: { store: shared.kv, pubsub: shared.pubsub },
      createServer: (caller) =>
        createMcpServer({ name: config.appName, dataTools: { tools, caller } }),
    }),
  )
`
}

/** The lookups \`passwordUsers\` turns into the login's check and the sessions' stamp. */
function loginWithUserTable(users: LoginTable): string {
  const table = `schema.${users.exportName}`
  const byId = users.numericId
    ? `async (id) => {
      const userId = Number(id)
      return Number.isSafeInteger(userId) ? find(eq(${table}.${users.idKey}, userId)) : undefined
    }`
    : `(id) => find(eq(${table}.${users.idKey}, id))`
  return `  // People sign in with the email and password of your ${users.exportName} table (hashed by
  // createPasswordHasher(), as the generated API stores them).
  const find = async (where: SQL) =>
    (
      await database.db
        .select({ id: ${table}.${users.idKey}, passwordHash: ${table}.${users.passwordKey} })
        .from(${table})
        .where(where)
        .limit(1)
    )[0]
  const accounts = passwordUsers({
    byEmail: (email) => find(eq(${table}.${users.emailKey}, email)),
    byId: ${byId},
  })
`
}
