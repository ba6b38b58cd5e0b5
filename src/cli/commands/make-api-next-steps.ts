import { dirname, join, relative, resolve } from 'node:path'
import pc from 'picocolors'
import { readAppWiring } from '../scaffold/api/app-wiring.ts'
import { importSpecifier } from '../scaffold/api/plan.ts'
import type { ModelTemplateInput } from '../scaffold/api/template-input.ts'
import { entryWiring } from '../scaffold/existing-entry.ts'

/**
 * The steps that wire the generated API into the app, numbered, leaving out those the app's
 * modules already take (a call of `apiRoutes` or `docsRoutes` outside the generated folder).
 * Migrating is always a step: a new model is a new table.
 */
export function printWiring(
  print: (line: string) => void,
  info: {
    models: ModelTemplateInput[]
    outDir: string
    root: string
    migrationsDir: string | undefined
    configMigrations: string | undefined
    dialect: 'postgres' | 'sqlite'
    /** The app had no generated API before this run. */
    firstApi: boolean
    /** The package's name, the docs' title. */
    appName: string
  },
): void {
  const wiring = readAppWiring(info.root, info.outDir)
  const hashes = info.models.some((m) => m.passwordColumn)
  const steps: string[][] = []
  const code = (line: string) => pc.dim(`       ${line}`)
  // The same hasher must check passwords at login: an app with its own passes that one.
  const hasher = [
    code("const passwords = createPasswordHasher()  // or your login's hasher"),
    code('const hashPassword = (password: string) => passwords.hash(password)'),
  ]
  if (!wiring.apiRoutes) {
    const entry = wiring.entry ?? join(info.root, 'src', 'main.ts')
    steps.push([
      `Mount the API in ${relative(info.root, entry)}, after your Hono app and your Drizzle db:`,
      ...entryWiring({
        dialect: info.dialect,
        apiImport: importSpecifier(dirname(entry), resolve(info.outDir, 'index.ts')),
        hashesPasswords: hashes,
        appName: info.appName,
      }).map(code),
    ])
  } else if (hashes && !wiring.hashPassword) {
    steps.push([
      'Pass hashPassword to apiRoutes(): a password of these models is stored hashed:',
      code("import { createPasswordHasher } from 'kilnjs/session'"),
      ...hasher,
      code("app.route('/', apiRoutes({ database, apiKeys, limiters, hashPassword }))"),
    ])
  }
  if (wiring.apiRoutes && !wiring.docsRoutes) {
    steps.push([
      'Register docsRoutes() (OpenAPI 3.0 at /api/openapi.json, 3.1 at /api/openapi-3.1.json, ReDoc at /api/docs):',
      code("app.route('/', docsRoutes({ app, title: 'My API', version: '1.0.0' }))"),
    ])
  }
  steps.push(migrateStep(info))
  const resources = info.models.map((m) => m.names.resource)
  if (info.firstApi) {
    steps.push([
      'Mint a key: npx kilnjs make:api-key <name> --save  (scopes * unless --scopes)',
      `     Routes need <resource>:read (GET) or <resource>:write (POST, PUT, DELETE), e.g. ${resources[0] ?? 'posts'}:read.`,
    ])
  } else {
    const scopes = resources.flatMap((resource) => [`${resource}:read`, `${resource}:write`])
    steps.push([
      `A key calls the new routes with ${scopes.join(', ')} (or *): npx kilnjs make:api-key <name> --save --scopes ${scopes.join(',')}`,
    ])
  }
  print('')
  print(pc.bold('Next steps'))
  steps.forEach(([first, ...rest], index) => {
    print(`  ${index + 1}. ${first}`)
    for (const line of rest) print(line)
  })
}

/**
 * How the tables get created, as the app's setup has it: `kilnjs migrate` applying the app's
 * folder after kiln's, or (no `migrations` in kiln.config.ts) drizzle-kit migrating the app's
 * tables as before and `kilnjs migrate` creating kiln's.
 */
function migrateStep(info: {
  root: string
  migrationsDir: string | undefined
  configMigrations: string | undefined
}): string[] {
  if (info.configMigrations !== undefined) {
    return [
      "Create your tables and kiln's: npx drizzle-kit generate, then npx kilnjs migrate",
      "     (drizzle-kit writes your tables' migration; kilnjs migrate runs it beside kiln's own)",
    ]
  }
  const where =
    info.migrationsDir === undefined
      ? ''
      : ` (the api_keys migration is in drizzle-kit's journal in ${relative(info.root, info.migrationsDir) || '.'}/, so drizzle-kit applies it too)`
  return [
    "Create kiln's tables: npx kilnjs migrate (kiln.config.ts names no migrations folder: it leaves yours alone)",
    `     Yours as before: npx drizzle-kit generate && npx drizzle-kit migrate${where}`,
  ]
}
