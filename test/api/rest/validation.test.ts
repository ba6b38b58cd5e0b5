import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { renameKeys, validate } from '../../../src/api/index.ts'
import { ValidationError } from '../../../src/core/index.ts'

/** The field errors `validate` reports for `value`. */
function errorsOf(schema: z.ZodType, value: unknown): Record<string, string[]> {
  try {
    validate(schema, value)
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    return (error as ValidationError).errors
  }
  throw new Error('expected a validation error')
}

// The demo's generated request schema for posts: strict, renamed to model properties.
const fields = {
  title: z.string().min(1).max(200),
  body: z.string().min(1),
  published: z.boolean(),
  token_count: z.int32(),
  author_id: z.int(),
}
const CreatePost = z
  .strictObject(fields)
  .partial({ published: true, token_count: true })
  .transform((body) => renameKeys(body, { token_count: 'tokenCount', author_id: 'authorId' }))
const UpdatePost = z.strictObject(fields).partial()
const valid = { title: 't', body: 'b', author_id: 1 }

describe('validation messages: a wrong-typed field says what was expected', () => {
  it.each([
    ['title', 5, 'must be a string'],
    ['title', true, 'must be a string'],
    ['published', 'yes', 'must be a boolean'],
    ['token_count', 1.5, 'must be an integer'],
    ['token_count', '3', 'must be an integer'],
    ['author_id', '1', 'must be an integer'],
    ['author_id', 1.5, 'must be an integer'],
    ['author_id', {}, 'must be an integer'],
    ['title', null, 'must not be null'],
  ])('POST %s = %j: %s', (field, value, message) => {
    expect(errorsOf(CreatePost, { ...valid, [field]: value })).toEqual({ [field]: [message] })
  })

  it('optional fields on PUT are checked the same way, never "is required"', () => {
    expect(errorsOf(UpdatePost, { published: 'yes', token_count: 2.5, title: 7 })).toEqual({
      published: ['must be a boolean'],
      token_count: ['must be an integer'],
      title: ['must be a string'],
    })
  })

  it('"is required" only for an absent field', () => {
    expect(errorsOf(CreatePost, { title: 't' })).toEqual({
      body: ['is required'],
      author_id: ['is required'],
    })
    expect(
      errorsOf(z.strictObject({ nested: z.object({ x: z.string() }) }), { nested: {} }),
    ).toEqual({ 'nested.x': ['is required'] })
  })

  it('lengths and ranges in the same voice, not zod text', () => {
    expect(errorsOf(CreatePost, { ...valid, title: '', body: 'x'.repeat(3) })).toEqual({
      title: ['must not be empty'],
    })
    expect(errorsOf(CreatePost, { ...valid, title: 'x'.repeat(201) })).toEqual({
      title: ['must be at most 200 characters'],
    })
    expect(errorsOf(CreatePost, { ...valid, token_count: 2 ** 40 })).toEqual({
      token_count: ['must be at most 2147483647'],
    })
    expect(errorsOf(CreatePost, { ...valid, author_id: 2 ** 60 })).toEqual({
      author_id: ['must be at most 9007199254740991'],
    })
    const schema = z.strictObject({
      password: z.string().min(8).max(255),
      code: z.string().length(3),
      tags: z.array(z.string()).min(1).max(2),
      qty: z.number().gt(0).lt(10),
      step: z.number().multipleOf(5),
      big: z.int().min(1),
    })
    expect(
      errorsOf(schema, { password: 'short', code: 'abcd', tags: [], qty: 0, step: 3, big: 0 }),
    ).toEqual({
      password: ['must be at least 8 characters'],
      code: ['must be exactly 3 characters'],
      tags: ['must have at least 1 item'],
      qty: ['must be greater than 0'],
      step: ['must be a multiple of 5'],
      big: ['must be at least 1'],
    })
    expect(
      errorsOf(schema, {
        password: 'x'.repeat(256),
        code: 'abc',
        tags: ['a', 'b', 'c'],
        qty: 10,
        step: 5,
        big: 1,
      }),
    ).toEqual({
      password: ['must be at most 255 characters'],
      tags: ['must have at most 2 items'],
      qty: ['must be less than 10'],
    })
  })

  it('formats, enums, literals, unions and containers', () => {
    const schema = z.strictObject({
      email: z.email().max(255),
      id: z.uuid(),
      at: z.iso.datetime(),
      day: z.iso.date(),
      site: z.url(),
      price: z.string().regex(/^\d+(\.\d{1,2})?$/),
      sku: z.string().startsWith('SKU-'),
      status: z.enum(['draft', 'published']),
      kind: z.literal('post'),
      ref: z.union([z.string(), z.number()]),
      meta: z.record(z.string(), z.number()),
      list: z.array(z.string()),
      flags: z.object({ on: z.boolean() }),
    })
    expect(
      errorsOf(schema, {
        email: 'nope',
        id: '123',
        at: 'yesterday',
        day: '2024-13-01',
        site: 'not a url',
        price: '1.234',
        sku: 'X-1',
        status: 'archived',
        kind: 'page',
        ref: true,
        meta: { a: 'x' },
        list: 'a',
        flags: [],
      }),
    ).toEqual({
      email: ['must be an email address'],
      id: ['must be a UUID'],
      at: ['must be an ISO 8601 date-time'],
      day: ['must be a date (YYYY-MM-DD)'],
      site: ['must be a URL'],
      price: ['must match the pattern /^\\d+(\\.\\d{1,2})?$/'],
      sku: ['must start with "SKU-"'],
      status: ['must be one of "draft", "published"'],
      kind: ['must be "post"'],
      ref: ['must be a string or a number'],
      'meta.a': ['must be a number'],
      list: ['must be an array'],
      flags: ['must be an object'],
    })
  })

  it('a message the schema sets itself is kept; unknown fields are named one by one', () => {
    const schema = z.strictObject({ price: z.string().regex(/^\d+$/, 'must be digits') })
    expect(errorsOf(schema, { price: 'x', colour: 1, size: 2 })).toEqual({
      price: ['must be digits'],
      colour: ['is not a known field'],
      size: ['is not a known field'],
    })
  })

  it('a body that is not an object is reported on _body', () => {
    expect(errorsOf(CreatePost, [1, 2])).toEqual({ _body: ['must be an object'] })
    expect(errorsOf(CreatePost, null)).toEqual({ _body: ['must not be null'] })
  })

  it('no message anywhere is zod text', () => {
    const messages = Object.values(
      errorsOf(CreatePost, { title: '', body: 5, published: 1, token_count: 'x', author_id: null }),
    ).flat()
    expect(messages).toHaveLength(5)
    for (const message of messages) {
      expect(message).toMatch(/^(is required|is not a known field|must .+)$/)
      expect(message).not.toMatch(/Invalid|expected|Too (small|big)/)
    }
  })
})
