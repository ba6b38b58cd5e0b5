import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { comments, posts, users } from '../../../examples/demo/src/schema.ts'
import {
  belongsTo,
  buildOpenApiDocument,
  defineListQuery,
  hasMany,
  type OpenApiParameter,
} from '../../../src/api/index.ts'
import { pgItems } from './structured-schema.ts'

const run = promisify(execFile)

const postsQuery = defineListQuery(posts, {
  search: ['title', 'body'],
  include: {
    author: belongsTo(users, posts.authorId, users.id),
    comments: hasMany(comments, comments.postId, posts.id, { limit: 5 }),
  },
})
const usersQuery = defineListQuery(users)
const itemsQuery = defineListQuery(pgItems)
const doc = buildOpenApiDocument(
  [
    { method: 'GET', path: '/api/v1/posts' },
    { method: 'GET', path: '/api/v1/posts/aggregate' },
    { method: 'GET', path: '/api/v1/users' },
    { method: 'GET', path: '/api/v1/items' },
    { method: 'GET', path: '/api/v1/items/aggregate' },
  ],
  {
    title: 'Query',
    resources: [
      { name: 'posts', model: 'Post', schema: z.object({ id: z.int() }), query: postsQuery },
      { name: 'users', model: 'User', schema: z.object({ id: z.int() }), query: usersQuery },
      { name: 'items', model: 'Item', schema: z.object({ id: z.int() }), query: itemsQuery },
    ],
  },
)
const parameters = (path: string) =>
  new Map(
    (doc.paths[path]?.get?.parameters ?? []).map((p: OpenApiParameter) => [p.name, p] as const),
  )
const enumOf = (parameter: OpenApiParameter | undefined) =>
  (parameter?.schema.items as { enum: string[] } | undefined)?.enum

describe('OpenAPI of list query parameters', () => {
  it('lists each parameter with the resource’s allowed values', () => {
    const list = parameters('/api/v1/posts')
    expect([...list.keys()]).toEqual([
      'page',
      'per_page',
      'filter',
      'sort',
      'fields',
      'include',
      'search',
      'cursor',
      'count',
    ])
    const filter = list.get('filter')!
    expect(filter.style).toBe('deepObject')
    const fields = filter.schema.properties as Record<
      string,
      { oneOf: Array<Record<string, unknown>> }
    >
    expect(Object.keys(fields)).toEqual([
      'id',
      'title',
      'body',
      'published',
      'token_count',
      'author_id',
      'created_at',
      'updated_at',
      'or',
    ])
    expect(filter.schema.additionalProperties).toBe(false)
    const titleOps = Object.keys(fields.title!.oneOf[1]!.properties as object)
    expect(titleOps).toContain('icontains')
    expect(Object.keys(fields.published!.oneOf[1]!.properties as object)).toEqual([
      'eq',
      'ne',
      'in',
      'not_in',
      'null',
    ])
    expect(fields.created_at!.oneOf[0]).toEqual({ type: 'string', format: 'date-time' })
    expect((list.get('sort')!.schema.items as { enum: string[] }).enum).toContain('-created_at')
    expect((list.get('include')!.schema.items as { enum: string[] }).enum).toEqual([
      'author',
      'comments',
    ])
    expect(list.get('count')!.schema.enum).toEqual(['exact', 'estimated', 'none'])
  })

  it('offers contains and overlaps on arrays and JSON, and JSON paths', () => {
    const filter = parameters('/api/v1/items').get('filter')!
    const fields = filter.schema.properties as Record<string, Record<string, unknown>>
    expect(Object.keys(fields.tags!.properties as object)).toEqual(['contains', 'overlaps', 'null'])
    expect(Object.keys(fields.meta!.properties as object)).toEqual(['contains', 'overlaps', 'null'])
    expect(Object.keys(fields)).not.toContain('api_token')
    expect(filter.schema.additionalProperties).toEqual({ type: 'string' })
    expect(filter.description).toContain('`filter[meta.key.subkey]=value`')
    expect(Object.keys(fields.title!.oneOf as object[])).toHaveLength(2)
  })

  it('documents the aggregate route from the allow-lists', () => {
    const operation = doc.paths['/api/v1/items/aggregate']!.get!
    expect(operation.operationId).toBe('aggregateItems')
    const list = parameters('/api/v1/items/aggregate')
    expect([...list.keys()]).toEqual(['count', 'sum', 'avg', 'min', 'max', 'group_by', 'filter'])
    expect(enumOf(list.get('sum'))).toEqual(['id', 'author_id', 'token_count'])
    expect(enumOf(list.get('group_by'))).toEqual([
      'id',
      'title',
      'published',
      'author_id',
      'token_count',
    ])
    expect(list.get('group_by')!.schema.maxItems).toBe(3)
    expect(parameters('/api/v1/posts/aggregate').has('search')).toBe(true)
  })

  it('never offers a sensitive field, and leaves out search and include where there are none', () => {
    const list = parameters('/api/v1/users')
    const filterFields = Object.keys(list.get('filter')!.schema.properties as object)
    expect(filterFields).not.toContain('password_hash')
    expect(filterFields).not.toContain('remember_token')
    expect((list.get('fields')!.schema.items as { enum: string[] }).enum).not.toContain(
      'password_hash',
    )
    expect(list.has('include')).toBe(false)
    expect(list.has('search')).toBe(false)
  })

  it('documents included relations on the list records', () => {
    const item = (
      doc.paths['/api/v1/posts']!.get!.responses['200'] as {
        content: { 'application/json': { schema: { properties: { data: { items: unknown } } } } }
      }
    ).content['application/json'].schema.properties.data.items as {
      allOf: [unknown, { properties: Record<string, unknown> }]
    }
    expect(item.allOf[1].properties.author).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/User' }],
      nullable: true,
    })
    expect(item.allOf[1].properties.comments).toMatchObject({ type: 'array', maxItems: 5 })
  })

  it('validates with swagger-parser and redocly lint', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
    const dir = mkdtempSync(join(tmpdir(), 'kiln-openapi-'))
    const file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
    try {
      const result = await run('npx', ['redocly', 'lint', file, '--format', 'json'], {
        maxBuffer: 20 * 1024 * 1024,
      }).catch((error: { stdout?: string }) => error)
      const report = JSON.parse(String(result.stdout)) as {
        totals: { errors: number }
        problems: Array<{ severity: string; message: string }>
      }
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
