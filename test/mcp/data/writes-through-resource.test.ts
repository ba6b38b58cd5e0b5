import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const dataTools = resolve(import.meta.dirname, '../../../src/mcp/data')

/**
 * The write tools write through the resource operations (`resourceWrites`): whatever a write
 * does beside its statement (timestamps, soft delete, the list totals, what is published of
 * it) is done once, for REST and MCP alike. A statement of the tools' own would skip it.
 */
describe('the MCP data tools write only through the resource operations', () => {
  it('no file of src/mcp/data builds an insert, update or delete of its own', () => {
    const own = /\.returning\(|\.values\(\s*[a-z]|\.(insert|update|delete)\(\s*[\w.]*table\b/
    for (const file of readdirSync(dataTools).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(dataTools, file), 'utf8')
      expect(own.exec(source)?.[0], file).toBeUndefined()
    }
    expect(readFileSync(join(dataTools, 'crud-writes.ts'), 'utf8')).toContain('resourceWrites(')
  })
})
