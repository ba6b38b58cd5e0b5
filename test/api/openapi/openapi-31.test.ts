import SwaggerParser from '@apidevtools/swagger-parser'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  apiDocs,
  buildOpenApiDocument,
  type OpenApi31Document,
  type OpenApiDocument,
  toOpenApi31,
} from '../../../src/api/index.ts'
import { toSchema31 } from '../../../src/api/openapi/version.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  KITCHEN_SINK,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from '../rest/generated-app.ts'
import { redoclyLint } from './lint.ts'

/** Every schema object of a document, wherever it sits. */
function keysEverywhere(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const entry of node) keysEverywhere(entry, found)
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      found.add(key)
      keysEverywhere(value, found)
    }
  }
  return found
}

describeEachDatabase('OpenAPI 3.0 and 3.1 documents', (backend) => {
  const apps = [
    ['the demo schema', undefined],
    ['every column type', KITCHEN_SINK[backend.dialect]],
  ] as const
  for (const [label, app] of apps) {
    describe(label, () => {
      let scaffolded: ScaffoldedApp
      let api: RunningApi
      let doc30: OpenApiDocument
      let doc31: OpenApi31Document

      beforeAll(async () => {
        scaffolded = await scaffoldApp(backend.dialect, app ? { app } : {})
        api = await startGeneratedApi(scaffolded, backend)
        const response30 = await api.app.request('/api/openapi.json')
        const response31 = await api.app.request('/api/openapi-3.1.json')
        expect(response30.status).toBe(200)
        expect(response31.status).toBe(200)
        expect(response31.headers.get('content-type')).toMatch(/application\/json/)
        doc30 = (await response30.json()) as OpenApiDocument
        doc31 = (await response31.json()) as OpenApi31Document
      })
      afterAll(async () => {
        await api?.close()
        scaffolded?.cleanup()
      })

      it('/api/openapi.json stays 3.0; /api/openapi-3.1.json is 3.1 with the same operations', () => {
        expect(doc30.openapi).toBe('3.0.3')
        expect(doc31.openapi).toBe('3.1.0')
        expect(doc31.jsonSchemaDialect).toBe('https://spec.openapis.org/oas/3.1/dialect/base')
        expect(Object.keys(doc31.paths)).toEqual(Object.keys(doc30.paths))
        expect(Object.keys(doc31.paths)).not.toContain('/api/openapi-3.1.json')
        for (const [path, item] of Object.entries(doc30.paths)) {
          expect(Object.keys(doc31.paths[path] ?? {})).toEqual(Object.keys(item))
        }
      })

      it('3.1 schemas are JSON Schema 2020-12: no nullable, no schema example', () => {
        const keys = keysEverywhere(doc31)
        expect(keys.has('nullable')).toBe(false)
        expect(keys.has('example')).toBe(false)
        expect(keysEverywhere(doc30).has('nullable')).toBe(true)
        const meta = doc31.components.schemas.PageMeta as {
          properties: Record<string, { type: unknown }>
        }
        expect(meta.properties.total?.type).toEqual(['integer', 'null'])
      })

      it('both validate with swagger-parser', async () => {
        await expect(SwaggerParser.validate(structuredClone(doc30) as never)).resolves.toBeTruthy()
        await expect(SwaggerParser.validate(structuredClone(doc31) as never)).resolves.toBeTruthy()
      })

      it('both pass redocly lint: no errors, no warning but the license the app did not give', async () => {
        for (const doc of [doc30, doc31]) {
          const report = await redoclyLint(doc)
          expect(report.totals.errors).toBe(0)
          expect(report.problems.map((p) => p.ruleId)).toEqual(['info-license'])
          // With the license the app gives apiDocs (`license:`), nothing is left to warn about.
          const licensed = {
            ...doc,
            info: {
              ...doc.info,
              license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
            },
          }
          expect((await redoclyLint(licensed)).problems.map((p) => p.message)).toEqual([])
        }
      }, 120_000)
    })
  }
})

describe('toOpenApi31', () => {
  it('turns nullable into a type list, null into the enum, and a nullable $ref into anyOf', () => {
    expect(toSchema31({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] })
    expect(toSchema31({ type: 'string', enum: ['a', 'b'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', 'b', null],
    })
    expect(toSchema31({ $ref: '#/components/schemas/User', nullable: true })).toEqual({
      anyOf: [{ $ref: '#/components/schemas/User' }, { type: 'null' }],
    })
    expect(
      toSchema31({
        type: 'object',
        allOf: [{ $ref: '#/components/schemas/User' }],
        nullable: true,
        description: 'With `include=author`.',
      }),
    ).toEqual({
      description: 'With `include=author`.',
      anyOf: [{ $ref: '#/components/schemas/User' }, { type: 'null' }],
    })
    expect(toSchema31({ type: 'string', nullable: false })).toEqual({ type: 'string' })
  })

  it('converts nested schemas, examples and boolean exclusive bounds', () => {
    expect(
      toSchema31({
        type: 'object',
        properties: {
          n: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 9 },
          m: { type: 'number', maximum: 5, exclusiveMaximum: false },
          tags: { type: 'array', items: { type: 'string', nullable: true, example: 'x' } },
        },
        additionalProperties: { type: 'integer', nullable: true },
        anyOf: [{ type: 'object', nullable: true }],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        n: { type: 'number', exclusiveMinimum: 0, maximum: 9 },
        m: { type: 'number', maximum: 5 },
        tags: { type: 'array', items: { type: ['string', 'null'], examples: ['x'] } },
      },
      additionalProperties: { type: ['integer', 'null'] },
      anyOf: [{ type: ['object', 'null'] }],
    })
  })

  it('keeps the 3.0 document untouched and converts parameters, bodies and responses', () => {
    const app = new Hono()
    app.get('/api/v1/things', (c) => c.json({}))
    const doc = buildOpenApiDocument(app.routes, {
      title: 'Things',
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      resources: [
        {
          name: 'things',
          model: 'Thing',
          schema: z.object({ id: z.int(), note: z.string().nullable() }),
          create: z.strictObject({ note: z.string().nullable() }),
        },
      ],
    })
    const before = structuredClone(doc)
    const converted = toOpenApi31(doc)
    expect(doc).toEqual(before)
    expect(converted.info.license).toEqual({
      name: 'MIT',
      url: 'https://opensource.org/licenses/MIT',
    })
    const thing = converted.components.schemas.Thing as {
      properties: Record<string, { type: unknown }>
    }
    expect(thing.properties.note?.type).toEqual(['string', 'null'])
    expect(keysEverywhere(converted).has('nullable')).toBe(false)
  })

  it('apiDocs writes the license it is given, and serves no 3.1 document with spec31Path: false', async () => {
    const app = new Hono()
    app.route(
      '/',
      apiDocs({ app, title: 'Licensed', license: { name: 'MIT', url: 'https://mit.edu/' } }),
    )
    app.get('/api/v1/ping', (c) => c.json({ ok: true }))
    for (const path of ['/api/openapi.json', '/api/openapi-3.1.json']) {
      const doc = (await (await app.request(path)).json()) as OpenApiDocument
      expect(doc.info.license).toEqual({ name: 'MIT', url: 'https://mit.edu/' })
    }
    const off = new Hono()
    off.route('/', apiDocs({ app: off, title: 'Off', spec31Path: false }))
    expect((await off.request('/api/openapi-3.1.json')).status).toBe(404)
  })
})
