import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { revokeApiKey } from '../../src/api/index.ts'
import {
  anyJson,
  describeFuzz,
  describeRequest,
  exchange,
  type FuzzDemo,
  fuzzParameters,
  fuzzTimeout,
  mintApiKey,
  nastyString,
} from './support.ts'

const RUNS = 300

/** Percent-encodes every UTF-8 byte outside the unreserved set (lone surrogates become U+FFFD). */
function pct(value: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Only what a header value may hold. */
function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim()
}

const RESOURCES = ['posts', 'comments', 'users', 'messages'] as const
type Resource = (typeof RESOURCES)[number]

const resource = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<string>(...RESOURCES) },
  { weight: 1, arbitrary: fc.constantFrom('POSTS', 'nope', 'api_keys', 'oauth_clients', '') },
)

const id = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 4 }).map(String) },
  fc.nat().map(String),
  fc.bigInt({ min: 2n ** 53n - 2n, max: 2n ** 70n }).map(String),
  fc.integer({ max: -1 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom(
    '0',
    '00001',
    '1.0',
    '1e3',
    '0x10',
    ' 1',
    '1%20',
    '%31',
    '１',
    '٣',
    '1;drop',
    '..',
    '%2e%2e',
    '.%2e',
    '1/..',
    '../users',
    '%2e%2e%2fusers',
    '1%2f2',
    '1%00',
    '%',
    '%%',
    '1?x=1',
    '1#frag',
    '9007199254740991',
    '9007199254740992',
    '99999999999999999999',
  ),
  nastyString.map(pct),
)

const queryKey = fc.oneof(
  fc.constantFrom(
    'page',
    'per_page',
    'sort',
    'filter',
    'include',
    'page[number]',
    'per_page[]',
    '__proto__',
    'constructor',
  ),
  nastyString,
)
const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 200 }).map(String),
  fc.bigInt({ min: 2n ** 52n, max: 2n ** 80n }).map(String),
  fc.double().map(String),
  fc.constantFrom('', '1e2', '0x10', ' 1', '1 ', '+1', '1.5', 'Infinity', '007', '100000000000'),
  nastyString,
)
const query = fc
  .array(fc.tuple(queryKey, queryValue), { maxLength: 5 })
  .map((pairs) =>
    pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')}`,
  )

const contentType = fc.oneof(
  { weight: 5, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json; charset=latin1',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'json',
      ';',
    ),
  },
  { weight: 1, arbitrary: nastyString.map(headerSafe) },
)

/** Field values of every type, and ones near each column's limits. */
const fieldValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.integer({ min: 1, max: 6 }),
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: 2n ** 31n, max: 2n ** 64n }).map(Number),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    'a'.repeat(121),
    'a'.repeat(201),
    'a'.repeat(256),
    'x@example.com',
    'not-an-email',
    '2025-11-21T16:00:00Z',
    '2025-11-21T16:00:00+14:00',
    '+275760-09-13T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999999Z',
    'wamid.x',
    'inbound',
    'text\u0000nul',
    '\uD800',
    2147483647,
    2147483648,
    -2147483649,
    '9007199254740993',
    1e308,
  ),
  anyJson,
)

const FIELDS = [
  'title',
  'body',
  'published',
  'token_count',
  'author_id',
  'post_id',
  'author_name',
  'email',
  'name',
  'password',
  'password_hash',
  'remember_token',
  'wamid',
  'direction',
  'phone',
  'sender_kind',
  'status',
  'error_code',
  'sent_at',
  'status_at',
  'id',
  'created_at',
  'updated_at',
]

/** A valid body for each resource, unique where the table wants it. */
function validBody(resource: Resource, unique: string, n: number): Record<string, unknown> {
  switch (resource) {
    case 'posts':
      return { title: `Title ${unique}`, body: 'Body', author_id: n, published: n % 2 === 0 }
    case 'comments':
      return { post_id: n, author_name: 'Ann', body: `Comment ${unique}` }
    case 'users':
      return { email: `${unique}@example.com`, name: 'Fuzz', password: 'x'.repeat(20) }
    case 'messages':
      return { wamid: `wamid.${unique}`, direction: 'inbound', phone: '12025550143', body: 'Hi' }
  }
}

/** A valid body with up to three fields set to other values, added or removed. */
const recordBody = (resource: fc.Arbitrary<Resource>) =>
  fc
    .record({
      resource,
      unique: fc.uuid(),
      n: fc.integer({ min: 1, max: 6 }),
      edits: fc.oneof(
        { weight: 2, arbitrary: fc.constant<Array<[string, unknown]>>([]) },
        {
          weight: 3,
          arbitrary: fc.array(
            fc.oneof(
              fc.tuple(fc.constantFrom(...FIELDS), fieldValue),
              fc.tuple(fc.constantFrom(...FIELDS), fc.constant(undefined)),
              fc.tuple(nastyString, fieldValue),
            ),
            { minLength: 1, maxLength: 3 },
          ),
        },
      ),
    })
    .map(({ resource, unique, n, edits }) => {
      const body = validBody(resource, unique, n)
      for (const [field, value] of edits) {
        if (value === undefined) delete body[field]
        else body[field] = value
      }
      return JSON.stringify(body)
    })

const bodyFor = (target: string): fc.Arbitrary<string | Uint8Array | undefined> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 8,
      arbitrary: recordBody(
        (RESOURCES as readonly string[]).includes(target)
          ? fc.constant(target as Resource)
          : fc.constantFrom(...RESOURCES),
      ),
    },
    { weight: 2, arbitrary: anyJson.map((value) => JSON.stringify(value) ?? 'null') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        '{',
        '{"title":',
        '[1,2',
        'NaN',
        '\uFEFF{}',
        '{"a":1}{"b":2}',
        `{"title":"x","body":"y","author_id":1,"__proto__":{"admin":true}}`,
        '[]',
        '"string"',
        '1'.repeat(400),
        `{${'"a":{'.repeat(2000)}${'}'.repeat(2001)}`,
        `[${'['.repeat(5000)}${']'.repeat(5001)}`,
      ),
    },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  )

describeFuzz('fuzz: the generated REST API', (backend) => {
  let demo: FuzzDemo
  let key: string
  let revokedKey: string
  let wrongKey: string

  beforeAll(async () => {
    demo = await backend.start()
    key = await mintApiKey(demo, 'fuzz')
    revokedKey = await mintApiKey(demo, 'revoked')
    await revokeApiKey(demo.ctx.database, revokedKey)
    // The right shape and prefix alphabet, never issued.
    wrongKey = `${key.slice(0, 8)}${'A'.repeat(key.length - 8)}`
    // A few records, so ids 1… exist for show, update and delete.
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    for (let i = 0; i < 3; i++) {
      const user = await demo.request('/api/v1/users', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          email: `seed${i}@example.com`,
          name: `Seed ${i}`,
          password: 'x'.repeat(20),
        }),
      })
      expect(user.status).toBe(201)
      const post = await demo.request('/api/v1/posts', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ title: `Post ${i}`, body: 'Body', author_id: i + 2 }),
      })
      expect(post.status, await post.clone().text()).toBe(201)
      const comment = await demo.request('/api/v1/comments', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ post_id: i + 1, author_name: 'Ann', body: 'Nice' }),
      })
      expect(comment.status).toBe(201)
    }
  })
  afterAll(async () => {
    await demo?.close()
  })

  const authorization = () =>
    fc.oneof(
      { weight: 30, arbitrary: fc.constant(`Bearer ${key}`) },
      {
        weight: 4,
        arbitrary: fc.constantFrom(
          undefined,
          `bearer ${key}`,
          `BEARER ${key}`,
          `Bearer  ${key}`,
          `Bearer ${key} `,
          key,
          `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
          `Bearer ${revokedKey}`,
          `Bearer ${wrongKey}`,
          `Bearer ${key}x`,
          `Bearer ${key.slice(0, -1)}`,
          `Bearer ${key.toUpperCase()}`,
          `Bearer ${key.replace('kl_live_', 'kl_test_')}`,
          `Bearer ${key}, Bearer ${key}`,
          'Bearer',
          'Bearer ',
          `Token ${key}`,
        ),
      },
      { weight: 1, arbitrary: nastyString.map((s) => headerSafe(`Bearer ${s}`)) },
      { weight: 1, arbitrary: nastyString.map(headerSafe) },
    )

  /** Mostly routes that exist (so handlers are reached), sometimes any method and shape. */
  const route = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.oneof(
        fc.record({ method: fc.constantFrom('GET', 'POST', 'POST'), withId: fc.constant(false) }),
        fc.record({
          method: fc.constantFrom('GET', 'PUT', 'PUT', 'DELETE'),
          withId: fc.constant(true),
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        withId: fc.boolean(),
      }),
    },
  )

  const request = () =>
    fc.record({
      route,
      target: resource.chain((name) => fc.record({ name: fc.constant(name), body: bodyFor(name) })),
      id,
      query: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 2, arbitrary: query }),
      authorization: authorization(),
      contentType,
      accept: fc.constantFrom(undefined, 'application/json', 'text/html', '*/*', 'image/png'),
    })

  const seen = new Map<number, number>()

  it(
    'never answers 5xx, keeps answering /health, and a rejected request changes no row',
    async () => {
      await fc.assert(
        fc.asyncProperty(request(), async (r) => {
          const path = `/api/v1/${r.target.name}${r.route.withId ? `/${r.id}` : ''}${r.query}`
          const headers: Record<string, string> = {}
          if (r.authorization !== undefined) headers.authorization = r.authorization
          if (r.contentType !== undefined) headers['content-type'] = r.contentType
          if (r.accept !== undefined) headers.accept = r.accept
          const { method } = r.route
          const sendsBody = method !== 'GET' && method !== 'HEAD' && r.target.body !== undefined
          const init: RequestInit = {
            method,
            headers,
            ...(sendsBody ? { body: r.target.body as BodyInit } : {}),
          }
          const result = await exchange(demo, describeRequest(method, path, init), () =>
            demo.request(path, init),
          )
          seen.set(result.status, (seen.get(result.status) ?? 0) + 1)
          if (result.status >= 400 && method !== 'HEAD') {
            // Errors are JSON `{ error }` without stack traces.
            const parsed = JSON.parse(result.body) as { error?: unknown }
            expect(typeof parsed.error, result.body).toBe('string')
            expect(result.body).not.toMatch(/\bat .+\.(?:ts|js):\d+/)
          }
          if (result.status < 400) {
            // Only the valid key (any case of the scheme, any spacing) gets past the auth.
            const token = /^bearer\s+(\S+)$/i.exec(r.authorization?.trim() ?? '')?.[1]
            expect(token, `${path} answered ${result.status} to ${r.authorization}`).toBe(key)
          }
        }),
        fuzzParameters(RUNS),
      )
      console.log(`REST statuses [${backend.name}]`, Object.fromEntries(seen))
    },
    fuzzTimeout(RUNS),
  )
})
