import { eq } from 'drizzle-orm'
import { createRecordCounter } from 'kilnjs/api'
import { type Authorize, createAuditTrail, createDataTools, type DataTools } from 'kilnjs/mcp'
import { commentsResource } from '../api/controllers/comments.ts'
import { postsResource } from '../api/controllers/posts.ts'
import { CreateCommentRequest } from '../api/requests/comment.ts'
import { CreatePostRequest, UpdatePostRequest } from '../api/requests/post.ts'
import type { DemoContext } from '../context.ts'
import { posts } from '../schema.ts'
import { demoRealtime } from './api.ts'

const built = new WeakMap<DemoContext, DataTools>()

/**
 * The demo's data tools, built once per context: `/mcp` registers them, and the consent page
 * offers what they allow (`describeAccess`). An assistant a user approved acts as that user:
 * it reads posts and comments, writes posts as their author and comments, deletes their own
 * posts once they approve each deletion (at /approvals/<id>, or in the client when it can
 * ask), and sees nothing of the users table.
 */
export function demoDataTools(ctx: DemoContext): DataTools {
  let tools = built.get(ctx)
  if (!tools) {
    // Every call is recorded in kiln_mcp_audit (the connected-apps page shows it), written in
    // batches off the call's path; closing the context writes what is still buffered.
    const audit = createAuditTrail({ database: ctx.database, logger: ctx.logger })
    ctx.onClose(() => audit.close())
    tools = createDataTools({
      audit,
      database: ctx.database,
      models: ctx.models,
      // The REST list's counts (same store): writes through either surface refresh `total`.
      counts: createRecordCounter({ store: ctx.shared.kv }),
      logger: ctx.logger,
      // The tools' writes reach the REST streams and the MCP subscriptions, as the API's do.
      realtime: demoRealtime(ctx),
      // Pending approvals in the shared store (Redis when REDIS_URL is set): any instance can
      // show the page, and any instance can run the approved retry.
      approvals: {
        store: ctx.shared.kv,
        pageUrl: (id) => `${ctx.config.appUrl}/approvals/${id}`,
      },
      // What each model shows, filters, sorts, searches and includes: the REST list queries'
      // rules, declared once beside the controllers. The access below says only which tools.
      queries: { posts: postsResource, comments: commentsResource },
      // What each model takes on create and update, and the checks on its values: the REST
      // request schemas, the same way. The access below says only which tools, and for whom.
      requests: {
        posts: { create: CreatePostRequest, update: UpdatePostRequest },
        comments: { create: CreateCommentRequest },
      },
      access: {
        unlisted: 'none',
        models: {
          posts: {
            tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'],
            // The default, said here: a deletion waits for the author's approval.
            approval: ['crud_delete'],
          },
          comments: {
            tools: ['crud_list', 'crud_create'],
          },
        },
        authorize: ownPostsOnly(ctx),
      },
    })
    built.set(ctx, tools)
  }
  return tools
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
