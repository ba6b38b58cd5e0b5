import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/processes.ts'

/**
 * What each entry point of the package exports, values and types, read with the TypeScript
 * compiler from its index.ts. The lists in test/package/surface/ are the public surface: a
 * name added or removed there is a decision about kiln's API, taken on purpose.
 */
const ENTRIES: Record<string, string> = {
  '.': 'src/index.ts',
  './core': 'src/core/index.ts',
  './db': 'src/db/index.ts',
  './api': 'src/api/index.ts',
  './oauth': 'src/oauth/index.ts',
  './mcp': 'src/mcp/index.ts',
  './messaging': 'src/messaging/index.ts',
  './storage': 'src/storage/index.ts',
  './cdn': 'src/cdn/index.ts',
  './session': 'src/session/index.ts',
}

/** The committed list of one entry point: test/package/surface/<name>.txt. */
const listFile = (entry: string) =>
  join(repoRoot, 'test/package/surface', `${entry === '.' ? 'kilnjs' : entry.slice(2)}.txt`)

/**
 * A name an app calls to build a piece of its app (a factory, a middleware, a loader) is marked
 * in its list by ` @example`: its doc comment must then show a call in an `@example`. The mark
 * is a decision taken with the name, not a guess from its spelling.
 */
const EXAMPLE_MARK = ' @example'

/** The lines of a list: each a name, perhaps followed by the mark. */
const listLines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
    : []

const readList = (file: string) => listLines(file).map((line) => line.replace(EXAMPLE_MARK, ''))

/** The names of a list that carry the mark. */
const markedNames = (file: string) =>
  listLines(file)
    .filter((line) => line.endsWith(EXAMPLE_MARK))
    .map((line) => line.slice(0, -EXAMPLE_MARK.length))

/** The comment lines at the top of a list, kept when the list is written anew. */
const listHeader = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(
          (line, i, lines) =>
            line.startsWith('#') && lines.slice(0, i).every((l) => l.startsWith('#')),
        )
    : []

interface Exported {
  name: string
  documented: boolean
  hasExample: boolean
}

function readSurface(): Map<string, Exported[]> {
  const program = ts.createProgram(
    Object.values(ENTRIES).map((file) => join(repoRoot, file)),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
      noEmit: true,
      strict: true,
      skipLibCheck: true,
      types: ['node'],
    },
  )
  const checker = program.getTypeChecker()
  const surface = new Map<string, Exported[]>()
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(repoRoot, file))
    const module = source && checker.getSymbolAtLocation(source)
    if (!module) throw new Error(`${file} is not a module`)
    surface.set(
      entry,
      checker.getExportsOfModule(module).map((symbol) => {
        // The declaration kiln wrote: through re-exports, but not into a dependency's types
        // (`Redis`, `McpServer` are documented where kiln re-exports them).
        let target = symbol
        while (target.flags & ts.SymbolFlags.Alias) {
          const next = checker.getImmediateAliasedSymbol(target)
          if (!next || !inKiln(next)) break
          // `import type { Redis } from 'ioredis'; export type { Redis }`: the export is kiln's.
          const imported = next.declarations?.some((d) => ts.isImportSpecifier(d))
          const beyond = imported ? checker.getImmediateAliasedSymbol(next) : undefined
          if (imported && (!beyond || !inKiln(beyond))) break
          target = next
        }
        const declaration = target.declarations?.find(isKilnSource)
        const docs = declaration ? docComments(declaration) : []
        return {
          name: symbol.name,
          documented: docs.length > 0 || (declaration !== undefined && leadingDoc(declaration)),
          hasExample: docs.some((doc) => (doc.tags ?? []).some(showsTsCall)),
        }
      }),
    )
  }
  return surface
}

/**
 * An `@example` that opens with a ```ts block: the form test/docs/snippets.test.ts type-checks,
 * so a marked name cannot pass with prose or an unchecked fragment.
 */
const showsTsCall = (tag: ts.JSDocTag) =>
  tag.tagName.text === 'example' &&
  (ts.getTextOfJSDocComment(tag.comment) ?? '').trimStart().startsWith('```ts\n')

const inKiln = (symbol: ts.Symbol) => symbol.declarations?.some(isKilnSource) ?? false

function isKilnSource(declaration: ts.Declaration): boolean {
  return declaration.getSourceFile().fileName.startsWith(join(repoRoot, 'src'))
}

/** `export type { Redis }` carries no parsed JSDoc: its statement's leading `/** … *\/` counts. */
function leadingDoc(declaration: ts.Node): boolean {
  const statement = ts.isExportSpecifier(declaration) ? declaration.parent.parent : declaration
  const text = statement.getSourceFile().text
  return (ts.getLeadingCommentRanges(text, statement.pos) ?? []).some((range) =>
    text.startsWith('/**', range.pos),
  )
}

/** The `/** … *\/` comments on a declaration (a variable's sit on its statement). */
function docComments(declaration: ts.Node): ts.JSDoc[] {
  let node: ts.Node = declaration
  if (ts.isVariableDeclaration(node)) node = node.parent.parent
  // `export type { Redis }`: the comment sits on the export declaration.
  if (ts.isExportSpecifier(node)) node = node.parent.parent
  return (node as ts.Node & { jsDoc?: ts.JSDoc[] }).jsDoc ?? []
}

const surface = readSurface()

describe('the public surface: each entry point exports the names its list says', () => {
  for (const [entry, exported] of surface) {
    it(`${entry === '.' ? 'kilnjs' : `kilnjs${entry.slice(1)}`}`, () => {
      const names = [...new Set(exported.map((e) => e.name))].sort()
      // `KILN_UPDATE_SURFACE=1 npx vitest run test/package/surface.test.ts` writes the lists
      // anew: the diff of test/package/surface/ is then the decision to review.
      if (process.env.KILN_UPDATE_SURFACE === '1') {
        const marked = new Set(markedNames(listFile(entry)))
        const lines = names.map((name) => (marked.has(name) ? `${name}${EXAMPLE_MARK}` : name))
        writeFileSync(listFile(entry), `${[...listHeader(listFile(entry)), ...lines].join('\n')}\n`)
      }
      expect(
        names,
        `${listFile(entry)}: a new export is a decision: update the list (and CHANGELOG.md when a name goes)`,
      ).toEqual(readList(listFile(entry)))
    })
  }

  it('package.json exports exactly these entry points', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))
    const exported = Object.keys(pkg.exports).filter((key) => key !== './package.json')
    expect(exported.sort()).toEqual(Object.keys(ENTRIES).sort())
  })
})

describe('the public surface is documented', () => {
  const all = [...surface.values()].flat()

  it('every exported name has a doc comment on its declaration', () => {
    const missing = [...new Set(all.filter((e) => !e.documented).map((e) => e.name))].sort()
    expect(missing, 'document these where they are declared (/** … */)').toEqual([])
  })

  it('the names marked ` @example` in the lists show a call in an @example', () => {
    const missing = [...surface].flatMap(([entry, exported]) => {
      const marked = new Set(markedNames(listFile(entry)))
      return exported.filter((e) => marked.has(e.name) && !e.hasExample).map((e) => e.name)
    })
    expect([...new Set(missing)].sort(), 'add an @example to these doc comments').toEqual([])
  })
})
