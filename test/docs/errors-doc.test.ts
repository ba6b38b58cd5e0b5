import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_CATALOGUE } from '../../src/core/error-catalogue.ts'

const DOC = join(import.meta.dirname, '../../docs/errors.md')
const START =
  '<!-- catalogue: generated from src/core/error-catalogue.ts by test/docs/errors-doc.test.ts -->'
const END = '<!-- end of catalogue -->'

/** The table of docs/errors.md, as the catalogue writes it. */
function catalogueTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|')
  const rows = Object.entries(ERROR_CATALOGUE).map(
    ([code, entry]) =>
      `| \`${code}\` | ${entry.status} | ${cell(entry.message)} | ${cell(entry.arises)} |`,
  )
  return [
    '| Code | Status | Message | Where it arises |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n')
}

describe('docs/errors.md', () => {
  it('lists every code of the catalogue with its status, message and origin', () => {
    const doc = readFileSync(DOC, 'utf8')
    const start = doc.indexOf(START)
    const end = doc.indexOf(END)
    expect(start, 'the generated-table marker').toBeGreaterThanOrEqual(0)
    expect(end, 'the end marker').toBeGreaterThan(start)
    const table = doc.slice(start + START.length, end).trim()
    // On a difference, replace the table with the expected one below.
    expect(table).toBe(catalogueTable())
  })
})
