import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import type { Command } from 'commander'
import { sql } from 'drizzle-orm'
import pc from 'picocolors'
import type { Env } from '../../core/config/index.ts'
import { sqliteClient } from '../../db/database.ts'
import { type Database, libraryMigrationsDir, type ModelInfo } from '../../db/index.ts'
import { readMigrationFiles } from '../../db/migrate.ts'
import { openAppDatabase } from '../app-context.ts'
import { CliError } from '../cli-error.ts'
import { loadKilnConfig, loadModelRegistry } from '../models/load.ts'
import { importSpecifier, modelTemplateInput } from '../scaffold/api/plan.ts'
import { type LoginTable, mcpModuleTemplate } from '../scaffold/init/mcp-template.ts'

export interface InitMcpOptions {
  /** Where to write the module, relative to the app root (default `src/mcp.ts`). */
  out?: string
  /** The entry point that must mount it (default: the first of `MAIN_GUESSES` that exists). */
  main?: string
  cwd?: string
  env?: Env
  print?: (line: string) => void
}

export interface InitMcpResult {
  /** The module, when this run wrote it. */
  written: string[]
  /** The steps still to do, by name; empty once OAuth and MCP are set up. */
  missing: McpStep[]
}

export type McpStep = 'install' | 'mount' | 'migrate' | 'secret' | 'policy' | 'config'

const MAIN_GUESSES = ['src/main.ts', 'main.ts', 'src/index.ts', 'src/server.ts', 'server.ts']
const MCP_PACKAGE = '@modelcontextprotocol/server'

/**
 * `kilnjs init:mcp`: adds sign-in, the OAuth authorization server and `/mcp` to an app that
 * `kilnjs init` set up, as one module of its own (never over an existing file), then prints
 * only the steps that are still missing: installing the MCP server package, mounting the module
 * in the entry point, kiln's migrations, MCP_TOKEN_SECRET and a model in the access policy.
 */
export async function runInitMcp(options: InitMcpOptions = {}): Promise<InitMcpResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const env = options.env ?? process.env
  const loaded = await loadKilnConfig(options.cwd)
  const { root, config } = loaded
  const schemaFile = resolve(root, config.schema)
  const inSrc = relative(root, schemaFile).split(/[\\/]/)[0] === 'src'
  const modulePath = resolve(root, options.out ?? (inSrc ? 'src/mcp.ts' : 'mcp.ts'))
  const written: string[] = []

  if (existsSync(modulePath)) {
    print(pc.dim(`  skip   ${relative(root, modulePath)} (exists)`))
  } else {
    await writeMcpModule(loaded, modulePath, print)
    written.push(modulePath)
  }

  const configEntry = `mcp: './${relative(root, modulePath).split(sep).join('/')}',`
  const namedInConfig = config.mcp !== undefined || nameInConfig(loaded.path, configEntry)
  if (!config.mcp && namedInConfig)
    print(`  update ${relative(root, loaded.path)} (${configEntry})`)

  const missing: McpStep[] = []
  const lines: string[] = []
  const step = (name: McpStep, text: string, ...code: string[]) => {
    missing.push(name)
    lines.push(`  ${missing.length}. ${text}`)
    for (const line of code) lines.push(pc.cyan(`       ${line}`))
  }

  if (!isInstalled(root, MCP_PACKAGE)) {
    step('install', 'Install the MCP server kiln builds on:', `npm install ${MCP_PACKAGE}`)
  }
  const mainFile = findMain(root, options.main)
  const mainText = mainFile ? readFileSync(mainFile, 'utf8') : ''
  if (!/\bmountMcp\s*\(/.test(mainText)) {
    const where = mainFile ? relative(root, mainFile) : 'your entry point'
    const specifier = importSpecifier(dirname(mainFile ?? modulePath), modulePath)
    step(
      'mount',
      `Mount it in ${where}, after the \`requestLog({ logger })\` line:`,
      `import { mountMcp } from '${specifier}'`,
      'mountMcp(app, { config, logger, database, shared, limiters })',
    )
  }
  if (await kilnMigrationsPending(root, env)) {
    step(
      'migrate',
      "Create kiln's OAuth tables (and any other pending migration):",
      'npx kilnjs migrate',
    )
  }
  if (!env.MCP_TOKEN_SECRET) {
    step(
      'secret',
      'Set the secret that signs access tokens (without it they end when the app restarts):',
      'export MCP_TOKEN_SECRET=$(openssl rand -base64 32)',
    )
  }
  if (!namedInConfig) {
    step(
      'config',
      `Name the module in ${relative(root, loaded.path)}, so \`kilnjs mcp\` follows its mcpAccess:`,
      configEntry,
    )
  }
  if (existsSync(modulePath) && !policyListsAModel(readFileSync(modulePath, 'utf8'))) {
    step(
      'policy',
      `Uncomment the models assistants may reach in mcpAccess (${relative(root, modulePath)}): until then /mcp reaches none`,
    )
  }

  printSteps(lines, print)
  return { written, missing }
}

/** Writes the MCP module, never over a file (`wx`), with sign-in on the users table found. */
async function writeMcpModule(
  loaded: Awaited<ReturnType<typeof loadKilnConfig>>,
  modulePath: string,
  print: (line: string) => void,
): Promise<void> {
  const { root, config } = loaded
  const registry = await loadModelRegistry(loaded)
  const users = loginTable(registry.models)
  const contents = mcpModuleTemplate({
    dialect: config.dialect,
    schemaImport: importSpecifier(dirname(modulePath), resolve(root, config.schema)),
    resources: registry.models.map((model) => model.resource),
    users,
  })
  mkdirSync(dirname(modulePath), { recursive: true })
  writeFileSync(modulePath, contents, { flag: 'wx' })
  print(`  create ${relative(root, modulePath)}`)
  print(
    pc.dim(
      users
        ? `         sign-in with the email and password of ${users.exportName}`
        : '         no users table with an email and a password hash: write verifyCredentials there',
    ),
  )
}

/** The steps still to do, numbered, or that nothing is left; then how to connect. */
function printSteps(lines: string[], print: (line: string) => void): void {
  print('')
  if (lines.length === 0) {
    print(pc.green('OAuth and MCP are set up: nothing left to do.'))
  } else {
    print(pc.bold('Still to do (from this folder)'))
    for (const line of lines) print(line)
  }
  print(
    pc.dim(
      'Start the app, then connect an assistant to <APP_URL>/mcp (http://localhost:3000/mcp by default).',
    ),
  )
}

/**
 * The table people sign in with: one with an email column, a password column (as make:api
 * finds it) and a single numeric or text primary key; a table named `users` first.
 */
function loginTable(models: ModelInfo[]): LoginTable | undefined {
  const ordered = [...models].sort(
    (a, b) => Number(b.resource === 'users') - Number(a.resource === 'users'),
  )
  for (const model of ordered) {
    const password = modelTemplateInput(model, {}).passwordColumn
    const email = model.columns.find((column) =>
      [column.name, column.key].some((name) => name.toLowerCase() === 'email'),
    )
    const id = model.primaryKey
    const numericId = id?.dataType === 'integer' || id?.dataType === 'number'
    if (!password || email?.dataType !== 'string' || !id) continue
    if (!numericId && id.dataType !== 'string') continue
    return {
      exportName: model.exportName,
      idKey: id.key,
      emailKey: email.key,
      passwordKey: password.key,
      numericId,
    }
  }
  return undefined
}

/**
 * The package is installed where the app resolves it. npm installs a peer by itself without
 * adding it to package.json, so the file, not the manifest, says it is there.
 */
function isInstalled(root: string, name: string): boolean {
  let dir = root
  for (;;) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true
    const parent = dirname(dir)
    if (parent === dir) return false
    dir = parent
  }
}

function findMain(root: string, main: string | undefined): string | undefined {
  if (main !== undefined) return existsSync(resolve(root, main)) ? resolve(root, main) : undefined
  return MAIN_GUESSES.map((path) => join(root, path)).find(existsSync)
}

/**
 * True when one of kiln's migrations (the OAuth tables among them) is not recorded in the
 * app's database, or the database cannot be read: `kilnjs migrate` then says why.
 */
async function kilnMigrationsPending(root: string, env: Env): Promise<boolean> {
  let app: Awaited<ReturnType<typeof openAppDatabase>>
  try {
    app = await openAppDatabase({ cwd: root, env })
  } catch (error) {
    if (error instanceof CliError) return true
    throw error
  }
  const expected = readMigrationFiles(libraryMigrationsDir(app.database.dialect), 'kiln')
  try {
    const applied = new Set(await appliedMigrations(app.database))
    return expected.some((file) => !applied.has(file.name))
  } catch {
    // No kiln_migrations table yet.
    return true
  } finally {
    await app.close()
  }
}

async function appliedMigrations(database: Database): Promise<string[]> {
  if (database.dialect === 'sqlite') {
    const rows = sqliteClient(database)?.prepare('SELECT name FROM kiln_migrations').all() ?? []
    return (rows as { name: string }[]).map((row) => row.name)
  }
  const result = await database.db.execute(sql`select name from kiln_migrations`)
  return (result.rows as { name: string }[]).map((row) => row.name)
}

/** The access policy lists a model on a line that is not commented out. */
function policyListsAModel(module: string): boolean {
  const models = /export const mcpAccess[\s\S]*?\bmodels:\s*\{([\s\S]*?)\n\s{2}\}/.exec(module)
  if (!models?.[1]) return true
  return models[1]
    .split('\n')
    .some((line) => /^\s*['"]?[\w$-]+['"]?\s*:/.test(line) && !/^\s*\/\//.test(line))
}

export function register(program: Command): void {
  program
    .command('init:mcp')
    .description(
      'Add sign-in, the OAuth server and /mcp with the data tools to the app: writes src/mcp.ts',
    )
    .option('--out <file>', 'where to write the module (default: src/mcp.ts)')
    .option('--main <file>', 'the entry point that mounts it (default: src/main.ts)')
    .action(async (flags: InitMcpOptions) => {
      await runInitMcp(flags)
    })
}

/**
 * Adds `mcp: './src/mcp.ts'` to kiln.config.ts, after `defineConfig({` as `kilnjs init` writes
 * it; false when the file is shaped otherwise (the step then says what to add).
 */
function nameInConfig(configPath: string, entry: string): boolean {
  const text = readFileSync(configPath, 'utf8')
  const opening = /defineConfig\(\{\n/
  if (!opening.test(text)) return false
  const comment = '  // The module kilnjs init:mcp wrote: `kilnjs mcp` follows its mcpAccess.\n'
  writeFileSync(
    configPath,
    text.replace(opening, (found) => `${found}${comment}  ${entry}\n`),
  )
  return true
}
