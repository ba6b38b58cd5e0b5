import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RESOURCE_OPERATIONS } from '../../src/api/resource/index.ts'
import { DATA_TOOLS } from '../../src/mcp/data/tools.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { APPROVAL } from './matrix/approval.ts'
import { AUDIT } from './matrix/audit.ts'
import { type Cell, OPERATION_IDS, openCell, type Row, SURFACES } from './matrix/cell.ts'
import { CREDENTIALS } from './matrix/credential.ts'
import { FIELDS } from './matrix/fields.ts'
import { ROW_FILTER } from './matrix/row-filter.ts'
import { SCOPE } from './matrix/scope.ts'
import { SOFT_DELETE } from './matrix/soft-delete.ts'

/**
 * Every declaration of a resource definition, each with a row per operation and per MCP tool,
 * and in each row a check or the reason it has none on every surface. The rows are the
 * catalogue's: the operations the definition offers and the tools' descriptors, so an operation,
 * a tool or a surface added without its cells fails the catalogue test below.
 */
const DECLARATIONS: Record<string, Record<string, Row>> = {
  'soft delete': SOFT_DELETE,
  scope: SCOPE,
  fields: FIELDS,
  'row filter': ROW_FILTER,
  credential: CREDENTIALS,
  approval: APPROVAL,
  audit: AUDIT,
}

describeEachDatabase('every declaration on every operation and surface', (backend) => {
  let cell: Cell
  let close: () => Promise<void>

  beforeAll(async () => {
    ;({ cell, close } = await openCell(backend))
  })
  afterAll(async () => close?.())

  it('the catalogue: each declaration has a row per operation and per MCP tool', () => {
    const rows = [...cell.definition.operations, ...DATA_TOOLS.map((tool) => tool.name)].sort()
    expect(rows.length).toBe(RESOURCE_OPERATIONS.length + DATA_TOOLS.length)
    for (const [declaration, matrix] of Object.entries(DECLARATIONS)) {
      expect(Object.keys(matrix).sort(), declaration).toEqual(rows)
    }
    // Every operation the document gives the resource is one of the definition's.
    const documented = Object.values(cell.doc.paths)
      .flatMap((item) => Object.values(item))
      .map((operation) => operation.operationId)
      .filter((id) => /Documents?$/.test(id))
    expect(documented.sort()).toEqual(
      [...cell.definition.operations].flatMap((op) => OPERATION_IDS[op] ?? [op]).sort(),
    )
  })

  for (const [declaration, matrix] of Object.entries(DECLARATIONS)) {
    for (const [operation, row] of Object.entries(matrix)) {
      for (const surface of SURFACES) {
        const check = row[surface]
        if (typeof check === 'function') {
          it(`${declaration}: ${operation} × ${surface}`, () => check(cell))
        } else {
          it(`${declaration}: ${operation} × ${surface}: n/a (${check?.notApplicable})`, () => {
            expect(check?.notApplicable).toMatch(/\w/)
          })
        }
      }
    }
  }
})

describe('the matrix catalogue', () => {
  it('names each surface of every row, a check or the reason it has none', () => {
    for (const [declaration, matrix] of Object.entries(DECLARATIONS)) {
      for (const [operation, row] of Object.entries(matrix)) {
        expect(Object.keys(row).sort(), `${declaration}: ${operation}`).toEqual(
          [...SURFACES].sort(),
        )
      }
    }
  })
})
