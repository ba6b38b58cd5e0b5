import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The shape of src/ that docs/architecture.md draws, checked over every relative import of every
 * file (static, dynamic, re-exports, `import type` included: a cycle through types alone still
 * ties the files together).
 *
 * - Layers: `core` ← `db` ← the capabilities ← `mcp` ← `cli` ← the package root (`index.ts`).
 *   Nothing imports a layer above its own, and the capabilities do not import each other.
 * - Seams: a room that is not `cli` (which sits on top of everything) reaches another capability
 *   only through that capability's public `index.ts` or one of the SEAMS below. `core` and `db`
 *   are the foundations: any room above them may use any of their files.
 * - Cycles: no cycle of files anywhere in src/, whatever folders its files sit in. (Folders are
 *   not held to it: a folder's loose files, such as `api/errors.ts`, serve its subfolders while
 *   its `index.ts` lists them, and that is no tie between files.)
 */

const SRC = resolve(import.meta.dirname, '../src')

/** Each room (the first folder under src/, or the root `index.ts`) → its layer, bottom up. */
const LAYERS: Record<string, number> = {
  core: 0,
  db: 1,
  api: 2,
  oauth: 2,
  messaging: 2,
  storage: 2,
  cdn: 2,
  session: 2,
  mcp: 3,
  cli: 4,
  'index.ts': 5,
}

/** Rooms whose files may import any file of a room below them. */
const FOUNDATIONS = new Set(['core', 'db'])
const TOP = new Set(['cli', 'index.ts'])

/**
 * Internal modules one room may import from another beyond its public `index.ts`: each one a
 * module written as a seam (it says so, and is not a subpath export of the package).
 */
const SEAMS = new Set([
  // the query, validation and soft-delete pieces the MCP data tools share with the REST API
  'api/internal.ts',
  // the page, session-form and error-page pieces the approval pages share with OAuth's pages
  'oauth/internal.ts',
])

type Graph = Map<string, string[]>

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Each file of src/ (relative) → the files of src/ it imports. */
function importGraph(): Graph {
  const graph: Graph = new Map()
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false)
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(SRC, resolve(dirname(file), name)))
    graph.set(relative(SRC, file), [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components of more than one node (or a node importing itself). */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  let next = 0
  const visit = (node: string) => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

const room = (file: string) => file.split('/')[0]!

/** `from -> to` for every import that climbs a layer or crosses between capabilities. */
function layerBreaks(graph: Graph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((target) => {
        const [a, b] = [room(file), room(target)]
        if (a === b) return false
        return LAYERS[b]! > LAYERS[a]! || (LAYERS[b] === LAYERS[a] && !TOP.has(a))
      })
      .map((target) => `${file} -> ${target}`),
  )
}

/** `from -> to` for every import into another room's internals that is no declared seam. */
function deepImports(graph: Graph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    TOP.has(room(file))
      ? []
      : targets
          .filter((target) => room(target) !== room(file) && !FOUNDATIONS.has(room(target)))
          .filter((target) => target !== `${room(target)}/index.ts` && !SEAMS.has(target))
          .map((target) => `${file} -> ${target}`),
  )
}

const graph = importGraph()

describe('the structure of src/', () => {
  it('reads the graph: type imports, re-exports and every room are in it', () => {
    expect(graph.get('api/query/count.ts')).toContain('api/query/types.ts')
    expect(graph.get('index.ts')).toContain('cli/models/load.ts')
    expect(new Set([...graph.keys()].map(room))).toEqual(new Set(Object.keys(LAYERS)))
  })

  it('every import points down the layers, and no capability imports another', () => {
    expect(layerBreaks(graph)).toEqual([])
  })

  it('a room reaches another capability through its index.ts or a declared seam only', () => {
    expect(deepImports(graph)).toEqual([])
    for (const seam of SEAMS) expect(graph.has(seam), seam).toBe(true)
  })

  it('no files form a cycle, within a folder or across folders', () => {
    expect(cycles(graph)).toEqual([])
  })

  it('finds what it looks for in a small graph', () => {
    const small: Graph = new Map([
      ['core/a.ts', ['db/b.ts']],
      ['db/b.ts', ['core/a.ts']],
      ['mcp/c.ts', ['api/rest/d.ts', 'api/index.ts', 'db/b.ts']],
      ['api/rest/d.ts', ['oauth/index.ts']],
      ['oauth/index.ts', []],
      ['api/index.ts', []],
    ])
    expect(cycles(small)).toEqual([['core/a.ts', 'db/b.ts']])
    expect(layerBreaks(small)).toEqual(['core/a.ts -> db/b.ts', 'api/rest/d.ts -> oauth/index.ts'])
    expect(deepImports(small)).toEqual(['mcp/c.ts -> api/rest/d.ts'])
  })
})
