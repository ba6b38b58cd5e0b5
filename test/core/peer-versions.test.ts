import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  assertPeerVersions,
  installedManifest,
  PeerVersionError,
  satisfies,
} from '../../src/core/peer-versions.ts'
import { repoRoot } from '../support/processes.ts'

const work = mkdtempSync(join(tmpdir(), 'kiln-peers-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A package on disk: its package.json and an entry file, as npm lays it out. */
function writePackage(dir: string, manifest: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ main: 'index.js', ...manifest }))
  writeFileSync(join(dir, 'index.js'), 'module.exports = {}\n')
}

describe('peer version ranges', () => {
  it('reads the range forms kiln declares', () => {
    expect(satisfies('4.0.0', '^4.0.0')).toBe(true)
    expect(satisfies('4.6.7', '^4.0.0')).toBe(true)
    expect(satisfies('3.25.76', '^4.0.0')).toBe(false)
    expect(satisfies('5.0.0', '^4.0.0')).toBe(false)
    // A prerelease of the next major is outside, like its release.
    expect(satisfies('5.0.0-beta.1', '^4.0.0')).toBe(false)
    expect(satisfies('0.45.4', '^0.45.0')).toBe(true)
    expect(satisfies('0.46.0', '^0.45.0')).toBe(false)
    expect(satisfies('0.44.7', '>=0.44.0 <0.46.0')).toBe(true)
    expect(satisfies('0.43.1', '>=0.44.0 <0.46.0')).toBe(false)
    expect(satisfies('1.19.9', '^1.14.0 || ^2.0.0')).toBe(true)
    expect(satisfies('4.99.0', '>=4.6.0 <5')).toBe(true)
    expect(satisfies('5.0.0', '>=4.6.0 <5')).toBe(false)
    expect(satisfies('1.13.0', '^1.14.0 || ^2.0.0')).toBe(false)
    expect(satisfies('not a version', '^4.0.0')).toBe(false)
    expect(() => satisfies('4.0.0', '~4.0.0')).toThrow(TypeError)
  })

  it("every required peer's range is one the check reads, and this checkout satisfies it", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))
    const required = Object.entries(manifest.peerDependencies as Record<string, string>).filter(
      ([name]) => !manifest.peerDependenciesMeta?.[name]?.optional,
    )
    expect(required.map(([name]) => name).sort()).toEqual(
      ['@hono/node-server', '@modelcontextprotocol/server', 'drizzle-orm', 'hono', 'zod'].sort(),
    )
    for (const [name, range] of required) {
      const installed = installedManifest(name, join(repoRoot, 'package.json'))
      expect(installed, name).toBeDefined()
      expect(satisfies(installed?.version ?? '', range), `${name} ${installed?.version}`).toBe(true)
    }
    expect(() => assertPeerVersions()).not.toThrow()
  })
})

/**
 * An installed kiln in an app, laid out as npm does: kiln's package.json (its peers) in
 * node_modules/kilnjs, the app's packages beside it. Each case has its own app, since Node
 * remembers where a package name resolved from a folder.
 */
function installKiln(app: string, packages: Record<string, string>): string {
  const kiln = join(work, app, 'node_modules/kilnjs')
  writePackage(kiln, {
    name: 'kilnjs',
    version: '0.1.0',
    peerDependencies: { zod: '^4.2.0', hono: '>=4.6.0 <5', pg: '^8.11.0' },
    peerDependenciesMeta: { pg: { optional: true } },
  })
  for (const [name, version] of Object.entries(packages)) {
    const dir = name.startsWith('kiln/') ? join(kiln, 'node_modules', name.slice(5)) : name
    writePackage(dir.startsWith('/') ? dir : join(work, app, 'node_modules', dir), {
      name: name.replace(/^kiln\//, ''),
      version,
    })
  }
  return join(kiln, 'package.json')
}

function thrown(action: () => void): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  return undefined
}

describe('an app whose peer is outside the range', () => {
  it('is one error naming the package, the version found, the range and the command', () => {
    // zod 3 beside kiln, as `npm install zod@3` after kiln leaves it (npm only warns then).
    const kiln = installKiln('zod-3', { zod: '3.25.76', hono: '4.13.19' })
    const error = thrown(() => assertPeerVersions(kiln))
    expect(error).toBeInstanceOf(PeerVersionError)
    expect(error).toMatchObject({ packageName: 'zod', found: '3.25.76', supported: '^4.2.0' })
    expect((error as Error).message).toBe(
      `kiln needs zod ^4.2.0; this app has zod 3.25.76 (${join(work, 'zod-3/node_modules/zod/package.json')}): ` +
        "npm install 'zod@^4.2.0'",
    )
  })

  it('a lower minor inside the range passes; one below it is named', () => {
    expect(
      thrown(() => assertPeerVersions(installKiln('low', { zod: '4.2.0', hono: '4.6.0' }))),
    ).toBeUndefined()
    expect(
      thrown(() => assertPeerVersions(installKiln('lower', { zod: '4.6.7', hono: '4.5.11' }))),
    ).toMatchObject({ packageName: 'hono', found: '4.5.11', supported: '>=4.6.0 <5' })
  })

  it("checks the copy kiln's imports load: a nested one inside the range passes", () => {
    const kiln = installKiln('nested', { zod: '3.25.76', 'kiln/zod': '4.6.7' })
    expect(installedManifest('zod', kiln)?.version).toBe('4.6.7')
    expect(thrown(() => assertPeerVersions(kiln))).toBeUndefined()
  })

  it('without a package.json of its own (kiln bundled into an app) there is nothing to check', () => {
    const app = join(work, 'bundled')
    writePackage(join(app, 'node_modules/zod'), { name: 'zod', version: '3.25.76' })
    writePackage(app, { name: 'app', peerDependencies: { zod: '^4.2.0' } })
    expect(thrown(() => assertPeerVersions(join(app, 'package.json')))).toBeUndefined()
    expect(thrown(() => assertPeerVersions(join(app, 'dist/package.json')))).toBeUndefined()
  })

  it('optional peers are not checked, and a missing peer is left to the import that needs it', () => {
    // pg 7 is outside pg's range, but pg is optional: the feature using it is untested there.
    const kiln = installKiln('optional', { zod: '4.6.7', pg: '7.18.2' })
    expect(installedManifest('hono', kiln)).toBeUndefined()
    expect(thrown(() => assertPeerVersions(kiln))).toBeUndefined()
  })
})
