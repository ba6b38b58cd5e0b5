import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DATA_TOOLS } from '../../src/mcp/data/tools.ts'

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** The rows of docs/mcp/data-tools.md's annotation table, by the tool named in the first cell. */
function documentedAnnotations(): Map<string, Record<string, boolean>> {
  const docs = readFileSync(new URL('../../docs/mcp/data-tools.md', import.meta.url), 'utf8')
  const section = docs.slice(docs.indexOf('## Tool annotations'))
  const rows = new Map<string, Record<string, boolean>>()
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    const name = /^`(\w+)`$/.exec(cells[1] ?? '')?.[1]
    if (!name || cells.length !== HINTS.length + 3) continue
    rows.set(
      name,
      Object.fromEntries(HINTS.map((hint, index) => [hint, cells[index + 2] === 'true'])),
    )
  }
  return rows
}

describe("docs/mcp/data-tools.md's annotation table", () => {
  it('has a row for every data tool, with the hints its descriptor declares', () => {
    const documented = documentedAnnotations()
    for (const tool of DATA_TOOLS) {
      const declared = Object.fromEntries(HINTS.map((hint) => [hint, tool.annotations[hint]]))
      expect(documented.get(tool.name), tool.name).toEqual(declared)
    }
  })
})
