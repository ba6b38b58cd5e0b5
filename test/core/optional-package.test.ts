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
