import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  importOptional,
  MissingPackageError,
  requireOptional,
} from '../../src/core/optional-package.ts'

// A name no registry package has, so the import fails the way a missing optional peer does.
const absent = 'kiln-test-absent-package'

describe('optional packages', () => {
  it('a missing package is one error naming it and the install command', async () => {
    const error = await importOptional(
      absent,
      'SQLite (a sqlite: URL)',
      () => import(absent),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(MissingPackageError)
    expect((error as MissingPackageError).packageName).toBe(absent)
    expect((error as Error).message).toBe(
      `SQLite (a sqlite: URL) needs the package ${absent}, which is not installed: npm install ${absent}`,
    )
    expect(() => requireOptional(absent, 'Redis (REDIS_URL)')).toThrow(
      `Redis (REDIS_URL) needs the package ${absent}, which is not installed: npm install ${absent}`,
    )
  })

  it('an installed package loads, and other failures pass through unchanged', async () => {
    const pc = await importOptional('picocolors', 'Colours', () => import('picocolors'))
    expect(typeof pc.default.bold).toBe('function')
    expect(requireOptional<{ version: string }>('zod/package.json', 'zod').version).toMatch(/^4\./)
    const broken = new Error('boom')
    await expect(
      importOptional('picocolors', 'Colours', () => Promise.reject(broken)),
    ).rejects.toBe(broken)
  })
})

const repo = resolve(import.meta.dirname, '../..')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'templates' ? [] : sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

describe('every optional peer', () => {
  it('is loaded through importOptional or requireOptional, which name it when it is missing', () => {
    const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
      peerDependenciesMeta: Record<string, { optional?: boolean }>
    }
    const optional = Object.keys(manifest.peerDependenciesMeta).filter(
      (name) => manifest.peerDependenciesMeta[name]?.optional,
    )
    const unguarded: string[] = []
    for (const file of sources(join(repo, 'src'))) {
      const text = readFileSync(file, 'utf8')
      for (const name of optional) {
        const escaped = name.replace(/[/.]/g, '\\$&')
        // A value import (`typeof import(…)` is a type and loads nothing).
        const loads = new RegExp(`(?<!typeof )import\\('${escaped}[/']`).test(text)
        const guarded = new RegExp(`(importOptional|requireOptional)(<[^>]*>)?\\(\\s*'${escaped}'`)
        if (loads && !guarded.test(text)) unguarded.push(`${file.slice(repo.length + 1)}: ${name}`)
      }
    }
    expect(unguarded).toEqual([])
  })
})
