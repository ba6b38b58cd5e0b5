import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UUID_PATTERN } from '../../src/db/models/columns.ts'
import { operationsFromDocument } from '../../src/mcp/bridge/openapi-bridge.ts'
import {
  KITCHEN_SINK,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from '../api/rest/generated-app.ts'
import { describeEachDatabase } from '../support/databases.ts'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')

/**
 * `make:api --all` on a schema holding every kind of column (test/fixtures/kitchen-sink): the
 * generated code type-checks in a plain strict app, its OpenAPI document lints clean, and its
 * endpoints take valid values and refuse invalid ones with a 422 naming the field, never 500.
 */
describe('kitchen-sink schema: the generated code type-checks in a default strict tsconfig', () => {
  const apps: ScaffoldedApp[] = []
  beforeAll(async () => {
    for (const dialect of ['postgres', 'sqlite'] as const) {
      apps.push(await scaffoldApp(dialect, { app: KITCHEN_SINK[dialect] }))
    }
  })
  afterAll(() => {
    for (const app of apps) app.cleanup()
  })

  // What `tsc --init` writes (TypeScript 5.9), kiln resolved to its sources, and nothing else:
  // no allowImportingTsExtensions, no rewriteRelativeImportExtensions.
  const strict = {
    target: 'es2022',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
    paths: { kilnjs: [join(repo, 'src/index.ts')], 'kilnjs/*': [join(repo, 'src/*/index.ts')] },
  }
  for (const [label, resolution] of [
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
    ['bundler', { module: 'preserve', moduleResolution: 'bundler' }],
  ] as const) {
    it(`moduleResolution ${label}: no error in the generated files`, async () => {
      const config = join(repo, 'tmp', `tsconfig.kitchen-${label}-${process.pid}.json`)
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: { ...strict, ...resolution },
          include: apps.map((app) => join(app.outDir, '**/*.ts')),
        }),
      )
      try {
        const result = await run('npx', ['tsc', '-p', config], {
          cwd: repo,
          maxBuffer: 20 * 1024 * 1024,
        }).catch((error: { stdout: string }) => error)
        // kiln's own sources import with `.ts` (they are compiled for the package): only the
        // generated files are the app's.
        const generated = String(result.stdout)
          .split('\n')
          .filter((line) =>
            apps.some((app) => line.includes(join(app.outDir).slice(repo.length + 1))),
          )
        expect(generated).toEqual([])
      } finally {
        rmSync(config, { force: true })
      }
    }, 180_000)
  }
})

describeEachDatabase('kitchen-sink schema: generated endpoints', (backend) => {
  const postgres = backend.dialect === 'postgres'
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  const statuses: number[] = []
  let userId: number
  let orderId: string

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await api.request(method, path, body)
    statuses.push(response.status)
    const json = (await response.json()) as {
      data?: Record<string, unknown>
      errors?: Record<string, string[]>
    }
    return { status: response.status, ...json }
  }
  /** Asserts a 422 whose errors name exactly `field` (or a path inside it). */
  const refused = async (method: string, path: string, body: unknown, field: string) => {
    const response = await call(method, path, body)
    expect(response.status, JSON.stringify(body)).toBe(422)
    const fields = Object.keys(response.errors ?? {})
    expect(fields.length, JSON.stringify(response.errors)).toBeGreaterThan(0)
    for (const name of fields) {
      expect(name === field || name.startsWith(`${field}.`), JSON.stringify(response.errors)).toBe(
        true,
      )
    }
  }

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect, { app: KITCHEN_SINK[backend.dialect] })
    api = await startGeneratedApi(scaffolded, backend)
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  it('user (a singular export, created_at NOT NULL without default): created with a password', async () => {
    const created = await call('POST', '/api/v1/users', {
      email: 'ada@example.com',
      name: 'Ada',
      password: 'correct horse battery',
    })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ email: 'ada@example.com', name: 'Ada' })
    expect(new Date(String(created.data?.created_at)).getTime()).toBeGreaterThan(0)
    expect(created.data).not.toHaveProperty('password_hash')
    userId = created.data?.id as number
    await refused(
      'POST',
      '/api/v1/users',
      { email: 'ada@example.com', name: 'A', password: 'long enough' },
      'email',
    )
    await refused(
      'POST',
      '/api/v1/users',
      { email: 'b@example.com', name: 'B', password: 'long enough', password_hash: 'x'.repeat(20) },
      'password_hash',
    )
    await refused('PUT', `/api/v1/users/${userId}`, { id: 5 }, 'id')
    await refused(
      'PUT',
      `/api/v1/users/${userId}`,
      { created_at: '2020-01-01T00:00:00Z' },
      'created_at',
    )
  })

  it('group (text primary key, arrays, typed jsonb): the key is given on create, never updated', async () => {
    const body = { slug: 'admins', title: 'Admins', tags: ['a', 'b'], settings: { color: 'red' } }
    const created = await call('POST', '/api/v1/groups', body)
    expect(created.status).toBe(201)
    expect(created.data).toEqual(body)
    expect((await call('GET', '/api/v1/groups/admins')).data).toEqual(body)
    await refused('PUT', '/api/v1/groups/admins', { slug: 'owners' }, 'slug')
    await refused('POST', '/api/v1/groups', { ...body, slug: 'x', title: 'x'.repeat(41) }, 'title')
    if (postgres)
      await refused('POST', '/api/v1/groups', { ...body, slug: 'y', tags: ['a', 1] }, 'tags')
    // The generated allow-list filters arrays (and JSON) by element and path.
    const tagged = await call('GET', '/api/v1/groups?filter[tags][contains]=b')
    expect(tagged.status).toBe(200)
    expect((tagged.data as unknown as Array<{ slug: string }>).map((g) => g.slug)).toEqual([
      'admins',
    ])
    const untagged = await call('GET', '/api/v1/groups?filter[tags][overlaps]=c,d')
    expect(untagged.data).toEqual([])
    if (postgres) {
      const red = await call('GET', '/api/v1/groups?filter[settings.color]=red')
      expect((red.data as unknown as Array<{ slug: string }>).map((g) => g.slug)).toEqual([
        'admins',
      ])
    }
    expect((await call('GET', '/api/v1/groups/nobody')).status).toBe(404)
    expect((await call('GET', '/api/v1/groups/%00')).status).toBe(404)
    expect((await call('GET', `/api/v1/groups/${'x'.repeat(1001)}`)).status).toBe(404)
  })

  const validOrder = () => ({
    user_id: userId,
    group_slug: 'admins',
    kind: 'retail',
    total: 12.5,
    labels: ['fragile'],
    weight: 1.5,
    reference: '9007199254740993',
    ship_on: '2024-05-01',
    paid_at: '2024-05-01T10:00:00.000Z',
    notes: null,
    ...(postgres
      ? {
          ship_on_date: '2024-05-02',
          pickup_at: '10:30:00',
          scores: [1, 2],
          extra: { a: 1 },
          quantity: 3,
        }
      : {}),
  })

  it('order (uuid or text key, numeric, enums, dates, bigint): valid values are stored as given', async () => {
    const created = await call('POST', '/api/v1/orders', validOrder())
    expect(created.status).toBe(201)
    const order = created.data!
    orderId = String(order.id)
    if (postgres) expect(orderId).toMatch(/^[0-9a-f-]{36}$/)
    expect(order).toMatchObject({
      status: 'pending',
      kind: 'retail',
      reference: '9007199254740993',
      labels: ['fragile'],
      gift: false,
      notes: null,
      ship_on: '2024-05-01',
    })
    expect(Number(order.total)).toBe(12.5)
    expect(new Date(String(order.paid_at)).toISOString()).toBe('2024-05-01T10:00:00.000Z')
    if (postgres) {
      expect(order).toMatchObject({
        total: '12.50',
        ship_on_date: '2024-05-02',
        pickup_at: '10:30:00',
        scores: [1, 2],
        extra: { a: 1 },
        quantity: 3,
      })
    }
    expect((await call('GET', `/api/v1/orders/${orderId}`)).data).toEqual(order)
    const updated = await call('PUT', `/api/v1/orders/${orderId}`, {
      total: '12345678.99',
      status: 'paid',
    })
    expect(updated.status).toBe(200)
    expect(updated.data).toMatchObject({ status: 'paid', total: '12345678.99' })
  })

  it('order: invalid values are refused with a 422 naming the field', async () => {
    const path = '/api/v1/orders'
    if (postgres) {
      await refused('POST', path, { ...validOrder(), total: '8.999' }, 'total')
      await refused('POST', path, { ...validOrder(), total: 8.999 }, 'total')
      await refused('POST', path, { ...validOrder(), total: 123456789 }, 'total')
      await refused('POST', path, { ...validOrder(), quantity: 40_000 }, 'quantity')
      await refused('POST', path, { ...validOrder(), weight: 1e39 }, 'weight')
      await refused('POST', path, { ...validOrder(), ship_on_date: '2024-13-45' }, 'ship_on_date')
      await refused('POST', path, { ...validOrder(), pickup_at: '25:00' }, 'pickup_at')
      await refused('POST', path, { ...validOrder(), scores: ['x'] }, 'scores')
      await refused('POST', path, { ...validOrder(), user_id: 987_654 }, 'user_id')
    } else {
      const missingUser = await call('POST', path, { ...validOrder(), user_id: 987_654 })
      expect(missingUser.status).toBe(422)
    }
    await refused('POST', path, { ...validOrder(), total: 'twelve' }, 'total')
    await refused('POST', path, { ...validOrder(), status: 'lost' }, 'status')
    await refused('POST', path, { ...validOrder(), kind: undefined }, 'kind')
    await refused('POST', path, { ...validOrder(), reference: '99999999999999999999' }, 'reference')
    await refused('POST', path, { ...validOrder(), paid_at: 'yesterday' }, 'paid_at')
    await refused('POST', path, { ...validOrder(), gift: 'yes' }, 'gift')
    await refused('POST', path, { ...validOrder(), labels: undefined }, 'labels')
    await refused('PUT', `${path}/${orderId}`, { id: orderId }, 'id')
    await refused('PUT', `${path}/${orderId}`, { created_at: '2020-01-01T00:00:00Z' }, 'created_at')
  })

  it('order: ids that cannot exist are 404, whatever their shape', async () => {
    for (const id of ['not-a-uuid', '12', '00000000-0000-0000-0000-000000000000', '%00']) {
      expect((await call('GET', `/api/v1/orders/${id}`)).status).toBe(404)
      expect((await call('PUT', `/api/v1/orders/${id}`, { gift: true })).status).toBe(404)
      expect((await call('DELETE', `/api/v1/orders/${id}`)).status).toBe(404)
    }
  })

  it('ledger entry (bigint key): numeric scale, ids beyond 2^53', async () => {
    const created = await call('POST', '/api/v1/ledger_entries', {
      order_id: orderId,
      amount: '1.2345',
    })
    expect(created.status).toBe(201)
    const id = String(created.data?.id)
    expect((await call('GET', `/api/v1/ledger_entries/${id}`)).status).toBe(200)
    for (const bad of ['99999999999999999999', '9223372036854775808', 'abc', '-1']) {
      expect((await call('GET', `/api/v1/ledger_entries/${bad}`)).status).toBe(404)
    }
    if (postgres) {
      await refused(
        'POST',
        '/api/v1/ledger_entries',
        { order_id: orderId, amount: '1.23456' },
        'amount',
      )
      await refused('POST', '/api/v1/ledger_entries', { order_id: 'nope', amount: 1 }, 'order_id')
    }
  })

  it('foreign keys: restrict answers 409, cascade removes the dependants', async () => {
    const blocked = await call('DELETE', `/api/v1/users/${userId}`)
    expect(blocked.status).toBe(409)
    expect((await call('DELETE', '/api/v1/groups/admins')).status).toBe(200)
    expect((await call('GET', `/api/v1/orders/${orderId}`)).status).toBe(404)
    expect((await call('DELETE', `/api/v1/users/${userId}`)).status).toBe(200)
  })

  it('answered no request with a 5xx', () => {
    expect(statuses.length).toBeGreaterThan(40)
    expect(statuses.filter((status) => status >= 500)).toEqual([])
  })

  it('OpenAPI: path ids follow the primary key, scopes are listed; the MCP bridge agrees', async () => {
    const doc = (await (await api.app.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<{ schema: unknown }> }>>
    }
    const idSchema = (resource: string) =>
      doc.paths[`/api/v1/${resource}/{id}`]?.get?.parameters?.[0]?.schema
    expect(idSchema('users')).toEqual({ type: 'integer', minimum: 1 })
    expect(idSchema('ledger_entries')).toEqual({ type: 'integer', minimum: 1 })
    expect(idSchema('groups')).toEqual({ type: 'string' })
    expect(idSchema('orders')).toEqual(
      postgres
        ? { type: 'string', format: 'uuid', pattern: UUID_PATTERN.source }
        : { type: 'string' },
    )
    expect(doc.paths['/api/v1/orders']?.get).toMatchObject({ 'x-scopes': ['orders:read'] })
    expect(doc.paths['/api/v1/orders/{id}']?.put).toMatchObject({ 'x-scopes': ['orders:write'] })
    const tool = operationsFromDocument(doc).find((o) => o.path === '/api/v1/orders/{id}')
    const input = tool?.tool.inputSchema as unknown as {
      properties: Record<string, { type: string }>
    }
    expect(input.properties.id?.type).toBe('string')
  })

  it('OpenAPI: passes swagger-parser and redocly lint with no error', async () => {
    const doc = await (await api.app.request('/api/openapi.json')).json()
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
    const dir = mkdtempSync(join(tmpdir(), 'kiln-kitchen-'))
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
      expect(report.totals.errors).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
