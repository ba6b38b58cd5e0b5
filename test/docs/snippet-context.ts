/**
 * The names a code block in the docs may use without defining them. The first group is what the
 * entry point `kilnjs init` writes (docs/getting-started.md, "The entry point"); the second is
 * what a page defines in its first block and its later blocks reuse, named where it is defined.
 * Every other name a block uses, it imports or defines itself.
 */
import type { Hono } from 'hono'
import type { ApiKeyProvider } from 'kilnjs/api'
import type { AppConfig, Logger, RateLimiters, Redactor, SharedState } from 'kilnjs/core'
import type { ModelRegistry, PostgresDatabase } from 'kilnjs/db'
import type { McpAccessOptions } from 'kilnjs/mcp'
import type { OAuthConfig } from 'kilnjs/oauth'
import type { Storage } from 'kilnjs/storage'

declare global {
  // The entry point.
  const app: Hono
  const config: AppConfig
  const logger: Logger
  const database: PostgresDatabase
  const shared: SharedState
  const limiters: RateLimiters
  const apiKeys: ApiKeyProvider
  // docs/core.md, Logs: the Redactor given to createLogger.
  const redactor: Redactor
  // docs/oauth.md, Configuration: loadOAuthConfig(process.env, …).
  const oauthConfig: OAuthConfig
  // docs/models.md and docs/mcp/: createModelRegistry(schema, 'postgres') and the app's access policy.
  const models: ModelRegistry
  const access: McpAccessOptions
  // docs/storage.md, first block: createStorage({ … }).
  const storage: Storage
}
