import { join, resolve } from 'node:path'
import type { Command } from 'commander'
import pino from 'pino'
import { createRecordCounter } from '../../api/index.ts'
import { firstLineOf } from '../../core/first-line.ts'
import { createLogger, type Logger, Redactor, Secret } from '../../core/index.ts'
import { createAuditLog, type Database, type KilnConfig } from '../../db/index.ts'
import {
  createOpenApiBridgeServer,
  fetchKeyScopes,
  fetchOpenApiDocument,
  operationsFromDocument,
} from '../../mcp/bridge/openapi-bridge.ts'
import { registerDeveloperTools } from '../../mcp/developer/developer-tools.ts'
import {
  type AuditTrail,
  createAuditTrail,
  createDataTools,
  createMcpServer,
  DEFAULT_SPEC_PATH,
  type McpAccessOptions,
  OpenApiBridgeError,
  serveStdio,
} from '../../mcp/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { CliError } from '../cli-error.ts'
import { importAppModule, loadModelRegistry } from '../models/load.ts'

interface McpCommandOptions {
  apiUrl?: string
  apiKey?: string
  specPath?: string
}

/** Logs to standard error: standard output belongs to the MCP protocol. */
function stderrLogger(redactor: Redactor): Logger {
  return createLogger({
    level: process.env.LOG_LEVEL ?? 'warn',
    redactor,
    destination: pino.destination({ dest: 2, sync: true }),
    name: 'kiln-mcp',
  })
}

/**
 * `kilnjs mcp`: the local stdio MCP server of the app in the current folder (data tools over its
 * models, messaging status and listeners, code templates). With `--api-url` and `--api-key`
 * it is instead a bridge exposing each operation of that API's OpenAPI document as a tool.
 */
export async function runMcp(options: McpCommandOptions): Promise<void> {
  const redactor = new Redactor()
  if (options.apiUrl !== undefined || options.apiKey !== undefined) {
    const given = options.apiKey ?? process.env.KILN_API_KEY
    if (!options.apiUrl || !given) {
      throw new CliError('kilnjs mcp: --api-url and --api-key (or KILN_API_KEY) go together')
    }
    const apiKey = new Secret(given)
    redactor.add(apiKey)
    let apiUrl: URL
    try {
      apiUrl = new URL(options.apiUrl)
      if (apiUrl.protocol !== 'http:' && apiUrl.protocol !== 'https:') throw new TypeError()
    } catch {
      throw new CliError(`--api-url expects an absolute http(s) URL, got "${options.apiUrl}"`)
    }
    const bridgeOptions = {
      apiUrl: apiUrl.toString(),
      apiKey,
      specPath: options.specPath ?? DEFAULT_SPEC_PATH,
    }
    let document: Record<string, unknown>
    let scopes: string[] | undefined
    try {
      document = await fetchOpenApiDocument(bridgeOptions)
      scopes = await fetchKeyScopes(document, bridgeOptions)
    } catch (error) {
      if (error instanceof OpenApiBridgeError) throw new CliError(error.message)
      throw error
    }
    if (scopes === undefined) {
      // Standard output is the MCP stream: the notice goes to standard error.
      process.stderr.write(
        'kilnjs mcp: the API has no GET …/keys/self to say what the key may call: every operation of its document is listed\n',
      )
    }
    const operations = operationsFromDocument(document, { scopes })
    await serveStdio(() => createOpenApiBridgeServer(operations, bridgeOptions))
    return
  }

  const logger = stderrLogger(redactor)
  const app = await openAppDatabase()
  try {
    const models = await loadModelRegistry({
      config: app.kilnConfig,
      root: app.root,
      path: join(app.root, 'kiln.config.ts'),
    })
    const access = await appAccessPolicy(app.kilnConfig, app.root)
    const audit = await stdioAuditTrail(app.database, logger)
    const tools = createDataTools({
      audit,
      database: app.database,
      models,
      access,
      // No approval page on the developer's own machine: the person at the keyboard confirms a
      // marked write in their client (form elicitation), recorded as client-confirmed.
      approvals: { clientConfirmation: { tools: ['crud_create', 'crud_update', 'crud_delete'] } },
      // A look at the database as it is: the app's writes do not reach this process's counter.
      counts: createRecordCounter({ ttlMs: 0 }),
      logger,
    })
    const developer = { root: app.root, kilnConfig: app.kilnConfig }
    await serveStdio(
      () =>
        createMcpServer({
          dataTools: { tools },
          register: [(server) => registerDeveloperTools(server, developer)],
        }),
      async () => {
        await audit?.close()
        await app.close()
      },
    )
  } catch (error) {
    await app.close().catch(() => {})
    throw error
  }
}

/**
 * The access policy the app declares for its assistants: the `mcpAccess` export of the module
 * kiln.config.ts names in `mcp` (what `kilnjs init:mcp` writes). An app that declares none is
 * the developer's own machine and database: every tool on every model (credentials and the
 * timestamps kiln maintains stay out of reach, as everywhere), said on standard error.
 */
async function appAccessPolicy(config: KilnConfig, root: string): Promise<McpAccessOptions> {
  if (config.mcp === undefined) {
    process.stderr.write(
      "kilnjs mcp: kiln.config.ts names no `mcp` module, so every model is reachable (unlisted: 'all'); " +
        "set mcp: './src/mcp.ts' (kilnjs init:mcp does) to follow the app's mcpAccess\n",
    )
    return { unlisted: 'all' }
  }
  const file = resolve(root, config.mcp)
  let module: Record<string, unknown>
  try {
    module = await importAppModule(file)
  } catch (error) {
    throw new CliError(
      `Could not load the MCP module ${file} (\`mcp\` in kiln.config.ts): ${firstLineOf(error)}`,
      { cause: error },
    )
  }
  const access = module.mcpAccess
  if (access === null || typeof access !== 'object') {
    throw new CliError(
      `The MCP module ${file} (\`mcp\` in kiln.config.ts) exports no mcpAccess object: export the access policy as \`export const mcpAccess\``,
    )
  }
  process.stderr.write(`kilnjs mcp: following mcpAccess in ${config.mcp}\n`)
  return access as McpAccessOptions
}

/**
 * The stdio server records its calls in the audit trail like `/mcp` does (with no user or
 * client: the developer's own process). A database not migrated yet has no audit table: the
 * server then runs without one and says so on standard error.
 */
async function stdioAuditTrail(
  database: Database,
  logger: Logger,
): Promise<AuditTrail | undefined> {
  const log = createAuditLog(database)
  try {
    await log.list({ limit: 1 })
  } catch {
    logger.warn('kilnjs mcp: no kiln_mcp_audit table: calls are not audited (run `kilnjs migrate`)')
    return undefined
  }
  return createAuditTrail({ log, logger })
}

export function register(program: Command): void {
  program
    .command('mcp')
    .description(
      "Serve an MCP server on stdio: the app's data tools, messaging status and code templates; " +
        "or, with --api-url and --api-key, one tool per operation of the API's OpenAPI document",
    )
    .option('--api-url <url>', 'bridge mode: the base URL of a kiln API')
    .option('--api-key <key>', 'bridge mode: the API key to call it with (or set KILN_API_KEY)')
    .option(
      '--spec-path <path>',
      `bridge mode: where the OpenAPI document is (default ${DEFAULT_SPEC_PATH})`,
    )
    .action(async (options: McpCommandOptions) => {
      await runMcp(options)
      process.exit(0)
    })
}
