import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CliError } from '../../src/cli/cli-error.ts'
import { loadKilnConfig, loadModelRegistry, loadSchemaModule } from '../../src/cli/models/load.ts'

const root = resolve(import.meta.dirname, '../..')
const fixture = join(root, 'test/fixtures/sqlite-app')

describe('loadKilnConfig', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-config-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("loads the repository root's config (the demo), resolving the kiln import", async () => {
    const loaded = await loadKilnConfig(root)
    expect(loaded.root).toBe(root)
    expect(loaded.path).toBe(join(root, 'kiln.config.ts'))
    expect(loaded.config).toMatchObject({
      dialect: 'postgres',
      schema: './examples/demo/src/schema.ts',
      migrations: './examples/demo/migrations',
    })
    const registry = await loadModelRegistry(loaded)
    expect(registry.dialect).toBe('postgres')
    expect(registry.names()).toEqual(expect.arrayContaining(['Comment', 'Post', 'User']))
  })

  it('loads the SQLite fixture config and its models', async () => {
    const loaded = await loadKilnConfig(fixture)
    expect(loaded).toEqual({
      root: fixture,
      path: join(fixture, 'kiln.config.ts'),
      config: {
        dialect: 'sqlite',
        schema: './schema.ts',
        out: './api',
        migrations: './migrations',
      },
    })
    const registry = await loadModelRegistry(loaded)
    expect(registry.names()).toEqual(['Note', 'Post', 'User'])
  })

  it('defaults to the current directory', async () => {
    const cwd = process.cwd()
    process.chdir(fixture)
    try {
      expect((await loadKilnConfig()).root).toBe(fixture)
    } finally {
      process.chdir(cwd)
    }
  })

  it('says clearly when there is no config', async () => {
    const error = await loadKilnConfig(dir).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    expect((error as Error).message).toBe(
      `No kiln.config.ts in ${dir}: run kiln from your app's root, or set kiln up there with npx kilnjs init`,
    )
  })

  it('names every bad field in one line', async () => {
    await writeFile(
      join(dir, 'kiln.config.ts'),
      "export default { dialect: 'mysql', schema: '', migrations: 3, custom: true }\n",
    )
    const error = await loadKilnConfig(dir).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    const message = (error as Error).message
    expect(message.split('\n')).toHaveLength(1)
    expect(message).toMatch(/^kiln\.config\.ts is invalid: /)
    expect(message).toContain("dialect: expected 'postgres' or 'sqlite'")
    expect(message).toContain('schema: expected a path (the module exporting your Drizzle tables)')
    expect(message).toContain('out: expected a path')
    expect(message).toContain('migrations: expected a path')
  })

  it('keeps unknown fields, for newer commands', async () => {
    await writeFile(
      join(dir, 'kiln.config.ts'),
      "export default { dialect: 'sqlite', schema: './s.ts', out: './api', extra: { a: 1 } }\n",
    )
    expect((await loadKilnConfig(dir)).config).toMatchObject({ extra: { a: 1 } })
  })

  it('reports a config without a default export, or one that fails to load', async () => {
    await writeFile(join(dir, 'kiln.config.ts'), "export const config = { dialect: 'sqlite' }\n")
    await expect(loadKilnConfig(dir)).rejects.toThrow(
      'kiln.config.ts has no default export: export default defineConfig({ … })',
    )
    await writeFile(join(dir, 'kiln.config.ts'), "import './missing.ts'\nexport default {}\n")
    const error = await loadKilnConfig(dir).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    expect((error as Error).message).toMatch(/^Could not load kiln\.config\.ts: .*missing/)
  })

  it('reports a syntax error in the schema with its file, line, column and text', async () => {
    const schema = join(dir, 'broken-schema.ts')
    await writeFile(schema, 'export const a = 1\nexport const b = {\n  c: 2,,\n}\n')
    const error = await loadSchemaModule(schema).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    const where = `${relative(process.cwd(), schema)}:3:8`
    expect((error as Error).message).toBe(
      `Could not load the schema module ${schema}: syntax error at ${where}: Expected identifier but found ","\n    3 |   c: 2,,\n      |        ^`,
    )
  })

  it('reports a missing schema module and a schema of the wrong dialect', async () => {
    await expect(loadSchemaModule(join(dir, 'schema.ts'))).rejects.toThrow(
      `Schema module not found: ${join(dir, 'schema.ts')}`,
    )
    await mkdir(join(dir, 'src'))
    await writeFile(
      join(dir, 'kiln.config.ts'),
      `export default { dialect: 'postgres', schema: ${JSON.stringify(join(fixture, 'schema.ts'))}, out: './api' }\n`,
    )
    const error = await loadModelRegistry(await loadKilnConfig(dir)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CliError)
    expect((error as Error).message).toMatch(
      /is a SQLite \(sqlite-core\) table, but the app's dialect is Postgres/,
    )
  })
})
