import { randomBytes } from 'node:crypto'
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'

const repo = resolve(import.meta.dirname, '../..')
const demo = join(repo, 'examples/demo')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

describe('the demo API is the output of make:api --all', () => {
  const root = join(repo, 'tmp', `demo-regen-${randomBytes(4).toString('hex')}`)

  beforeAll(async () => {
    // The demo's layout (src/schema.ts beside src/api), its schema and its own migrations.
    mkdirSync(join(root, 'src'), { recursive: true })
    mkdirSync(join(root, 'migrations'))
    cpSync(join(demo, 'src/schema.ts'), join(root, 'src/schema.ts'))
    for (const file of readdirSync(join(demo, 'migrations'))) {
      if (!file.endsWith('_api_keys.sql')) {
        cpSync(join(demo, 'migrations', file), join(root, 'migrations', file))
      }
    }
    writeFileSync(
      join(root, 'kiln.config.ts'),
      "import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: 'postgres', schema: './src/schema.ts', out: './src/api', migrations: './migrations' })\n",
    )
    await runMakeApi({ cwd: root, all: true, yes: true, print: () => {} })
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('regenerating gives exactly the committed files', () => {
    const committed = files(join(demo, 'src/api')).map((f) => relative(join(demo, 'src/api'), f))
    const generated = files(join(root, 'src/api')).map((f) => relative(join(root, 'src/api'), f))
    expect(generated.sort()).toEqual(committed.sort())
    for (const file of committed) {
      expect(readFileSync(join(root, 'src/api', file), 'utf8'), file).toBe(
        readFileSync(join(demo, 'src/api', file), 'utf8'),
      )
    }
  })

  it('and the same api_keys migration', () => {
    const committed = readdirSync(join(demo, 'migrations')).filter((f) =>
      f.endsWith('_api_keys.sql'),
    )
    const generated = readdirSync(join(root, 'migrations')).filter((f) =>
      f.endsWith('_api_keys.sql'),
    )
    expect(generated).toEqual(committed)
    expect(readFileSync(join(root, 'migrations', generated[0]!), 'utf8')).toBe(
      readFileSync(join(demo, 'migrations', committed[0]!), 'utf8'),
    )
  })
})
