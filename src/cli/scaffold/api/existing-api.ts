import { indexExportLine, resourceEntry, routeImports, routeLine } from './app-templates.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'

/** The result of adding models to an existing `routes.ts` or `index.ts`. */
export interface ModuleEdit {
  /** The new contents, when every insertion point was found. */
  contents?: string
  /** What to add by hand, when the file no longer has the generated shape. */
  manual: string[]
}

const IMPORT = /^import [^;]*?from '([^']+)'\n/gm

/**
 * Adds models to a generated `routes.ts`: their imports among the relative imports (sorted
 * by path, as the formatter keeps them), their `.route(…)` lines among the others and their
 * `apiResources` entries before the list's end. Models whose controller the file already
 * names are left alone. A file whose shape was changed by hand gets no edit: the lines to
 * add are returned instead.
 */
export function addModelsToRoutes(
  source: string,
  models: ModelTemplateInput[],
  ctx: Pick<TemplateContext, 'dialect'>,
): ModuleEdit {
  const missing = models.filter((m) => !new RegExp(`\\b${m.names.controller}\\b`).test(source))
  const manual = missing.flatMap((m) => [
    ...routeImports(m.names).map((i) => i.line),
    routeLine(m).trim(),
    resourceEntry(m, ctx),
  ])
  if (missing.length === 0) return { contents: source, manual: [] }

  const imports = [...source.matchAll(IMPORT)].filter((m) => m[1]!.startsWith('./'))
  const routes = [...source.matchAll(/^ {4}\.route\('\/[^']*', \w+\(context\)\)\n/gm)]
  const list = /^export const apiResources: OpenApiResource\[\] = \[\n([\s\S]*?)^\]\n/m.exec(source)
  if (imports.length === 0 || routes.length === 0 || !list) return { manual }

  // From the end backwards, so earlier offsets stay valid.
  const listStart = list.index + list[0].indexOf('\n') + 1
  const entries = splitEntries(list[1]!)
  const merged = [...entries, ...missing.map((m) => resourceEntry(m, ctx))]
  merged.sort((a, b) => entryName(a).localeCompare(entryName(b)))
  let out =
    source.slice(0, listStart) +
    merged.map((e) => `${e}\n`).join('') +
    source.slice(listStart + list[1]!.length)

  const routeStart = routes[0]!.index
  const routeEnd = routes.at(-1)!.index + routes.at(-1)![0].length
  const routeLines = [...routes.map((r) => r[0].trimEnd()), ...missing.map(routeLine)].sort(
    (a, b) => a.localeCompare(b),
  )
  out = out.slice(0, routeStart) + routeLines.map((l) => `${l}\n`).join('') + out.slice(routeEnd)

  const importStart = imports[0]!.index
  const importEnd = imports.at(-1)!.index + imports.at(-1)![0].length
  const statements = [
    ...imports.map((i) => ({ from: i[1]!, line: i[0].trimEnd() })),
    ...missing.flatMap((m) => routeImports(m.names)),
  ].sort((a, b) => a.from.localeCompare(b.from))
  out =
    out.slice(0, importStart) + statements.map((s) => `${s.line}\n`).join('') + out.slice(importEnd)
  return { contents: out, manual: [] }
}

/** Adds the models' controller exports to a generated `index.ts`. */
export function addModelsToIndex(source: string, models: ModelTemplateInput[]): ModuleEdit {
  const missing = models.filter((m) => !new RegExp(`\\b${m.names.controller}\\b`).test(source))
  if (missing.length === 0) return { contents: source, manual: [] }
  const lines = [...source.matchAll(/^export \{ \w+ \} from '\.\/controllers\/[^']+'\n/gm)]
  if (lines.length === 0) return { manual: missing.map(indexExportLine) }
  const start = lines[0]!.index
  const end = lines.at(-1)!.index + lines.at(-1)![0].length
  const merged = [...lines.map((l) => l[0].trimEnd()), ...missing.map(indexExportLine)].sort(
    (a, b) => controllerPath(a).localeCompare(controllerPath(b)),
  )
  return {
    contents: source.slice(0, start) + merged.map((l) => `${l}\n`).join('') + source.slice(end),
    manual: [],
  }
}

function controllerPath(line: string): string {
  return /from '([^']+)'/.exec(line)?.[1] ?? line
}

/** The `  { … },` entries of the `apiResources` list, each as its lines. */
function splitEntries(body: string): string[] {
  return body
    .split(/(?<=^ {2}\},)\n/m)
    .map((entry) => entry.replace(/\n$/, ''))
    .filter((entry) => entry.trim() !== '')
}

function entryName(entry: string): string {
  return /name: '([^']*)'/.exec(entry)?.[1] ?? ''
}
