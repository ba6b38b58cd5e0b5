import { eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import { createRecordCounter } from 'kilnjs/api'
import { type Authorize, createDataTools, createMcpServer, mcpEndpoint } from 'kilnjs/mcp'
import type { DemoContext } from '../context.ts'
import { posts } from '../schema.ts'
import type { DemoAppOptions } from './index.ts'
import { demoOAuth } from './oauth.ts'

/**
 * The MCP endpoint at /mcp: Streamable HTTP for both protocol eras, stateless, behind the
 * OAuth bearer middleware. An assistant a user approved acts as that user: it reads posts and
 * comments, writes posts as their author and comments, and sees nothing of the users table.
 */
export function mountMcp(app: Hono, ctx: DemoContext, options: DemoAppOptions = {}): void {
  const { validator, resourceMetadataUrl } = demoOAuth(ctx)
  const tools = createDataTools({
    database: ctx.database,
    models: ctx.models,
    // The REST list's counts (same store): writes through either surface refresh `total`.
    counts: createRecordCounter({ store: ctx.shared.kv }),
    logger: ctx.logger,
    access: {
      unlisted: 'none',
      models: {
        posts: {
          tools: ['crud_list', 'crud_create', 'crud_update'],
          write: ['title', 'body', 'published', 'author_id'],
        },
        comments: {
          tools: ['crud_list', 'crud_create'],
          write: ['post_id', 'author_name', 'body'],
        },
      },
      authorize: ownPostsOnly(ctx),
    },
  })
  app.route(
    '/mcp',
    mcpEndpoint({
      validator,
      resourceMetadataUrl,
      origins: { appUrl: ctx.config.appUrl, hosts: ctx.config.allowedHosts },
      logger: ctx.logger,
      createServer: (caller) =>
        createMcpServer({
          name: ctx.config.appName,
          dataTools: { tools, caller },
          register: options.mcp?.register,
          logging: options.mcp?.logging,
        }),
    }),
  )
}

/** Posts are written as the signed-in user: created with them as author, changed only if theirs. */
function ownPostsOnly(ctx: DemoContext): Authorize {
  return async ({ caller, model, action, id, data }) => {
    if (model !== 'posts' || action === 'crud_list') return true
    const userId = Number(caller?.userId)
    if (data?.author_id !== undefined && data.author_id !== userId) return false
    if (action === 'crud_create') return data?.author_id === userId
    const [post] = await ctx.database.db
      .select({ authorId: posts.authorId })
      .from(posts)
      .where(eq(posts.id, Number(id)))
    // A post that does not exist is left to the tool, which answers "No posts record".
    return post === undefined || post.authorId === userId
  }
}
