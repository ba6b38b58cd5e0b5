import { type ServerType, serve } from '@hono/node-server'
import type { Hono } from 'hono'
import { ConfigError, type QueueWorker } from 'kilnjs/core'
import pc from 'picocolors'
import { createDemoApp } from './app.ts'
import { createDemoContext, type DemoContext } from './context.ts'
import { demoJobHandlers } from './jobs.ts'
import { shareEmbeddedDatabase } from './share-database.ts'

/** `npm start`: the demo on the embedded defaults, or on DATABASE_URL and REDIS_URL when set. */
async function main(): Promise<void> {
  let ctx: DemoContext | undefined
  let app: Hono
  try {
    ctx = await createDemoContext()
    app = await createDemoApp(ctx)
  } catch (error) {
    // Configuration and unreachable services are one clear line, never a stack trace.
    await ctx?.close().catch(() => {})
    const message =
      error instanceof ConfigError || error instanceof TypeError
        ? error.message
        : `Could not start: ${(error as Error).message}`
    console.error(pc.red(message))
    process.exit(1)
  }

  // Only the default embedded database (no DATABASE_URL) is shared; `pglite:` URLs stay private.
  const embedded = ctx.database.pglite && !ctx.config.databaseUrl ? ctx.database.pglite : undefined
  const shared = embedded ? await shareEmbeddedDatabase(embedded) : undefined
  // Without Redis the queue is in this process, so this process works it. With Redis,
  // `kilnjs queue:work` runs workers (set WORKER=inline to also work jobs here).
  const inlineWorker = ctx.shared.kind === 'memory' || process.env.WORKER === 'inline'
  const worker: QueueWorker | undefined = inlineWorker
    ? ctx.shared.queue.work(demoJobHandlers(ctx), { concurrency: 4 })
    : undefined

  const server = serve({ fetch: app.fetch, port: ctx.config.port, hostname: ctx.config.host }, () =>
    printBanner(ctx, shared?.url, inlineWorker),
  )
  installShutdown(
    server,
    async () => {
      await worker?.close()
      await shared?.stop()
      await ctx.close()
    },
    ctx,
  )
}

function printBanner(ctx: DemoContext, sharedUrl: string | undefined, inlineWorker: boolean): void {
  const { config, demoUser } = ctx
  const lines = [
    '',
    pc.bold(`  ${config.appName} is running at ${config.appUrl}`),
    '',
    `  Open          ${config.appUrl}`,
    `  API docs      ${config.appUrl}/api/docs`,
    `  MCP endpoint  ${config.appUrl}/mcp`,
    `  Sign in       ${demoUser.email} / ${demoUser.generated ? demoUser.password : '(DEMO_PASSWORD)'}`,
    '',
    `  Database      ${sharedUrl ? `embedded PGlite (storage/pgdata), shared for the CLI at ${sharedUrl}` : 'DATABASE_URL'}`,
    `  Shared state  ${ctx.shared.kind === 'redis' ? 'Redis (REDIS_URL)' : 'memory (set REDIS_URL for several instances)'}`,
    `  Jobs          ${inlineWorker ? 'worked in this process' : 'run `npx kilnjs queue:work`'}`,
    '',
    `  Mint an API key in another terminal: ${pc.cyan('npx kilnjs make:api-key my-script --save')}`,
    '',
  ]
  console.log(lines.join('\n'))
}

/**
 * SIGINT/SIGTERM: stop accepting connections, let in-flight requests finish, drain the queue,
 * close everything, exit 0. A second signal, or 20 seconds, forces the exit.
 */
function installShutdown(server: ServerType, close: () => Promise<void>, ctx: DemoContext): void {
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      ctx.logger.warn({ signal }, 'forced exit')
      process.exit(1)
    }
    stopping = true
    ctx.logger.info({ signal }, 'shutting down')
    setTimeout(() => process.exit(1), 20_000).unref()
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      if ('closeIdleConnections' in server) server.closeIdleConnections()
    })
    try {
      await close()
    } catch (error) {
      ctx.logger.error({ err: error }, 'error while shutting down')
      process.exit(1)
    }
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
}

await main()
