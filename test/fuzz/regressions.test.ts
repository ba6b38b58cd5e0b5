import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { validate } from '../../src/api/index.ts'
import { ValidationError } from '../../src/core/index.ts'

/** Bugs the fuzz suites found, each pinned by the smallest request or call that showed it. */
describe('fuzz regressions', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'an unknown body field named %s is a 422 naming it, not a crash',
    (field) => {
      const schema = z.strictObject({ title: z.string() })
      const body = JSON.parse(`{"title":"x",${JSON.stringify(field)}:{"admin":true}}`)
      let error: unknown
      try {
        validate(schema, body)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ValidationError)
      const errors = (error as ValidationError).errors
      expect(Object.hasOwn(errors, field)).toBe(true)
      expect(JSON.parse(JSON.stringify(errors))).toEqual(
        JSON.parse(`{${JSON.stringify(field)}:["is not a known field"]}`),
      )
    },
  )
})
