import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { boolean, integer, jsonb, pgEnum, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { Hono } from 'hono'
import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  buildOpenApiDocument,
  defineListQuery,
  generateApiClient,
  scopeGuard,
  toOpenApi31,
} from '../../../src/api/index.ts'
import { redoclyLint } from '../openapi/lint.ts'

const repo = resolve(import.meta.dirname, '../../..')

/** Column names a TypeScript identifier cannot be: spaces, dashes, a leading digit, keywords. */
const mood = pgEnum('mood', ['happy', 'so-so'])
const oddThings = pgTable('odd things', {
  id: uuid('id').primaryKey().defaultRandom(),
  firstName: text('first name').notNull(),
  twoFa: boolean('2fa').notNull(),
  xY: integer('x-y'),
  kind: text('class'),
  feeling: mood('feeling'),
  extra: jsonb('extra'),
})

const OddThing = z.object({
  id: z.uuid(),
  'first name': z.string(),
  '2fa': z.boolean(),
  'x-y': z.int().nullable(),
  class: z.string().nullable(),
  feeling: z.enum(['happy', 'so-so']).nullable(),
  extra: z.unknown(),
})
const CreateOddThing = z.strictObject({
  'first name': z.string().min(1),
  '2fa': z.boolean(),
  'x-y': z.int().nullable().optional(),
})

describe('odd column names: documents and generated client', () => {
  const dir = join(repo, 'tmp', `odd-client-${randomBytes(4).toString('hex')}`)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const app = new Hono()
  const read = scopeGuard('odd:read')
  const write = scopeGuard('odd:write')
  const ok = () => new Response('{}')
  app.get('/api/v1/odd_things', read, ok)
  app.post('/api/v1/odd_things', write, ok)
  app.get('/api/v1/odd_things/:id', read, ok)
  app.put('/api/v1/odd_things/:id', write, ok)
  app.delete('/api/v1/odd_things/:id', write, ok)
  const doc = buildOpenApiDocument(app.routes, {
    title: 'Odd',
    license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    resources: [
      {
        name: 'odd_things',
        model: 'OddThing',
        schema: OddThing,
        create: CreateOddThing,
        update: CreateOddThing.partial(),
        idType: 'uuid',
        query: defineListQuery(oddThings, {
          fields: ['id', 'first name', '2fa', 'x-y', 'class', 'feeling'],
          filter: ['first name', '2fa', 'x-y', 'feeling'],
          sort: ['first name', 'x-y'],
        }),
      },
    ],
  })

  it('3.0 and 3.1 validate and lint with nothing to warn about', async () => {
    for (const version of [doc, toOpenApi31(doc)]) {
      await expect(SwaggerParser.validate(structuredClone(version) as never)).resolves.toBeTruthy()
      expect((await redoclyLint(version)).problems.map((p) => p.message)).toEqual([])
    }
  }, 60_000)

  it('the client quotes the names, and types their filters and sort keys', () => {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'api-client.ts'), generateApiClient(doc))
    writeFileSync(
      join(dir, 'use.ts'),
      `import { createClient, type OddThing } from './api-client'

const api = createClient({ baseUrl: 'http://127.0.0.1' })
export const page = api.odd_things.list({
  filter: { 'first name': { icontains: 'a' }, '2fa': true, 'x-y': { gte: 2 }, feeling: 'so-so' },
  sort: ['-first name', 'x-y'],
  fields: ['2fa', 'class'],
})
export const shown = api.odd_things.show('5f0c6c5e-8f3a-4c4b-9c69-3f1d4c1b2a10')
export const created = api.odd_things.create({ 'first name': 'A', '2fa': false })
export const name = (thing: OddThing): string => thing['first name']
// @ts-expect-error: class is not sortable
export const unsortable = api.odd_things.list({ sort: ['class'] })
// @ts-expect-error: an enum filter takes one of its values
export const feeling = api.odd_things.list({ filter: { feeling: 'sad' } })
// @ts-expect-error: the id is a uuid string
export const byNumber = api.odd_things.show(1)
`,
    )
    const program = ts.createProgram([join(dir, 'use.ts')], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Preserve,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      noPropertyAccessFromIndexSignature: true,
      verbatimModuleSyntax: true,
      types: [],
      noEmit: true,
    })
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(problems).toEqual([])
  }, 60_000)
})
