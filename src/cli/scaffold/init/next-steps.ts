import pc from 'picocolors'
import type { Dialect } from '../../../db/database.ts'

interface PackageJson {
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

export interface MissingPackages {
  runtime: string[]
  dev: string[]
}

/**
 * What the app still lacks for this setup: kiln's peers and the driver at run time; the
 * migration tool and the TypeScript loader the kiln command uses, as dev dependencies.
 */
export function missingPackages(pkg: PackageJson, dialect: Dialect): MissingPackages {
  const have = { ...pkg.dependencies, ...pkg.devDependencies }
  const driver = dialect === 'postgres' ? 'pg' : 'better-sqlite3'
  // redoc draws /api/docs, the page the last step opens.
  const runtime = ['hono', '@hono/node-server', 'drizzle-orm', 'zod', driver, 'redoc']
  const dev = ['drizzle-kit', 'tsx', 'typescript', '@types/node']
  return {
    runtime: runtime.filter((name) => !(name in have)),
    dev: dev.filter((name) => !(name in have)),
  }
}

export interface NextStepsInput {
  dialect: Dialect
  /** The entry point, relative to the app root. */
  mainPath: string
  missing: MissingPackages
  /** `DATABASE_URL` is set where init runs: no step to export it. */
  databaseUrlSet?: boolean
}

/** The commands after `kilnjs init`, in order, each to be run as written from the app's root. */
export function nextSteps({
  dialect,
  mainPath,
  missing,
  databaseUrlSet = false,
}: NextStepsInput): string[] {
  const lines = [pc.bold('Next steps (from this folder)')]
  let n = 0
  const step = (text: string, ...commands: string[]) => {
    lines.push(`  ${++n}. ${text}`)
    for (const command of commands) lines.push(pc.cyan(`       ${command}`))
  }
  const installs = [
    missing.runtime.length > 0 ? `npm install ${missing.runtime.join(' ')}` : undefined,
    missing.dev.length > 0 ? `npm install -D ${missing.dev.join(' ')}` : undefined,
  ].filter((command) => command !== undefined)
  if (installs.length > 0) step('Install what kiln needs beside it:', ...installs)
  if (dialect === 'postgres' && !databaseUrlSet) {
    step(
      'Point every command and the app at your database:',
      'export DATABASE_URL=postgres://user:password@127.0.0.1:5432/app',
    )
  }
  step('Generate the REST API for your tables:', 'npx kilnjs make:api --all')
  step(
    "Write your tables' migration (drizzle-kit reads drizzle.config.ts):",
    'npx drizzle-kit generate',
  )
  step("Create kiln's tables, then yours:", 'npx kilnjs migrate')
  step('Mint an API key (printed once):', 'npx kilnjs make:api-key first-key --save')
  step(`Start the app (${mainPath}):`, `npx tsx ${mainPath}`)
  step(
    'Call it with the key, and read the docs:',
    'curl -H "Authorization: Bearer <key>" http://localhost:3000/api/v1/<resource>',
    'open http://localhost:3000/api/docs',
  )
  return lines
}
