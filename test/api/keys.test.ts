import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ApiKeyRejectedError,
  apiKeyInsertSnippet,
  apiKeyInsertSql,
  generateApiKey,
  hashApiKey,
  parseApiKey,
} from '../../src/api/index.ts'
import {
  API_KEY_LENGTH,
  API_KEY_PREFIX_LENGTH,
  digestApiKey,
  digestMatches,
} from '../../src/api/keys/api-key.ts'
import { sqlString } from '../../src/api/keys/insert-statement.ts'

describe('generateApiKey', () => {
  it('mints kl_live_ keys of 51 characters with a 16-character prefix and a SHA-256 hex hash', () => {
    const key = generateApiKey('live')
    expect(key.rawKey).toMatch(/^kl_live_[0-9A-Za-z]{43}$/)
    expect(key.rawKey).toHaveLength(API_KEY_LENGTH)
    expect(key.prefix).toBe(key.rawKey.slice(0, API_KEY_PREFIX_LENGTH))
    expect(key.prefix).toHaveLength(16)
    expect(key.hashedKey).toMatch(/^[0-9a-f]{64}$/)
    expect(key.hashedKey).toBe(hashApiKey(key.rawKey))
  })

  it('mints kl_test_ keys for env test and defaults to live', () => {
    expect(generateApiKey('test').rawKey).toMatch(/^kl_test_[0-9A-Za-z]{43}$/)
    expect(generateApiKey().rawKey.startsWith('kl_live_')).toBe(true)
  })

  it('refuses an unknown env at once', () => {
    expect(() => generateApiKey('prod' as 'live')).toThrow(TypeError)
  })

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey().rawKey))
    expect(keys.size).toBe(2000)
  })

  it('discards random bytes >= 248 so every base62 character is equally likely', () => {
    // Bytes 248..255 would map to 0..7 again with a plain modulo; they must be skipped.
    let call = 0
    const key = generateApiKey('live', {
      randomBytes: (size) => {
        call++
        return Uint8Array.from({ length: size }, (_, i) => (call === 1 && i % 2 === 0 ? 250 : 61))
      },
    })
    expect(key.rawKey.slice(8)).toBe('z'.repeat(43))
  })

  it('uses each of the 62 characters with a near-uniform frequency', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 3000; i++) {
      for (const ch of generateApiKey().rawKey.slice(8)) counts.set(ch, (counts.get(ch) ?? 0) + 1)
    }
    expect(counts.size).toBe(62)
    const expected = (3000 * 43) / 62
    // Chi-square with 61 degrees of freedom: 120 is far beyond p = 0.0001 (about 109).
    const chi = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0)
    expect(chi).toBeLessThan(120)
  })
})

describe('parseApiKey', () => {
  const good = generateApiKey('test').rawKey

  it('accepts a well-formed key and reports env and prefix', () => {
    expect(parseApiKey(good)).toEqual({ env: 'test', prefix: good.slice(0, 16) })
  })

  const bad: [string, string][] = [
    ['empty', ''],
    ['too short', good.slice(0, 50)],
    ['too long', `${good}a`],
    ['another service prefix', `xx${good.slice(2)}`],
    ['another env', `kl_prod_${good.slice(8, 50)}`],
    ['a character outside base62', `${good.slice(0, 50)}-`],
    ['an underscore in the secret', `${good.slice(0, 50)}_`],
    ['non-ASCII letters', `${good.slice(0, 50)}é`],
    ['surrounding whitespace', ` ${good.slice(0, 50)}`],
    ['a newline', `${good.slice(0, 50)}\n`],
    ['upper-case env', `KL_TEST_${good.slice(8)}`],
  ]
  for (const [label, value] of bad) {
    it(`refuses ${label} as malformed`, () => {
      let error: unknown
      try {
        parseApiKey(value)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ApiKeyRejectedError)
      expect((error as ApiKeyRejectedError).reason).toBe('malformed')
      expect((error as ApiKeyRejectedError).status).toBe(401)
    })
  }

  it('never accepts a string that is not exactly the format (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (value) => {
        const shaped = /^kl_(live|test)_[0-9A-Za-z]{43}$/.test(value)
        let accepted = true
        try {
          parseApiKey(value)
        } catch {
          accepted = false
        }
        return accepted === shaped
      }),
    )
  })
})

describe('digestMatches', () => {
  it('compares a stored hex hash with the key digest, refusing malformed hashes', () => {
    const key = generateApiKey()
    expect(digestMatches(key.hashedKey, digestApiKey(key.rawKey))).toBe(true)
    expect(digestMatches(key.hashedKey.toUpperCase(), digestApiKey(key.rawKey))).toBe(true)
    expect(digestMatches(generateApiKey().hashedKey, digestApiKey(key.rawKey))).toBe(false)
    expect(digestMatches(key.hashedKey.slice(0, 62), digestApiKey(key.rawKey))).toBe(false)
    expect(digestMatches(`${key.hashedKey.slice(0, 63)}g`, digestApiKey(key.rawKey))).toBe(false)
  })
})

describe('apiKeyInsertSql', () => {
  const values = {
    name: "O'Brien's bot; DROP TABLE api_keys; --",
    prefix: 'kl_live_AbCdEfGh',
    hashedKey: 'a'.repeat(64),
    scopes: '["posts:read","it\'s"]',
    expiresAt: new Date('2026-03-01T00:00:00.000Z'),
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
  }

  it('quotes every value for Postgres', () => {
    expect(apiKeyInsertSql('postgres', values)).toBe(
      `INSERT INTO "api_keys" ("name", "prefix", "hashed_key", "scopes", "expires_at", "created_at") VALUES ('O''Brien''s bot; DROP TABLE api_keys; --', 'kl_live_AbCdEfGh', '${'a'.repeat(64)}', '["posts:read","it''s"]', '2026-03-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');`,
    )
  })

  it('writes SQLite timestamps as epoch milliseconds and NULL for missing values', () => {
    const sql = apiKeyInsertSql('sqlite', { ...values, scopes: null, expiresAt: null })
    expect(sql).toContain(`NULL, NULL, ${values.createdAt.getTime()});`)
  })

  it('refuses NUL characters', () => {
    expect(() => sqlString('a\u0000b')).toThrow(TypeError)
  })

  it('prints a Drizzle snippet with the table of the dialect', () => {
    expect(apiKeyInsertSnippet('postgres', values)).toContain(
      "import { apiKeysPg } from 'kilnjs/db'",
    )
    expect(apiKeyInsertSnippet('sqlite', values)).toContain('apiKeysSqlite')
    expect(apiKeyInsertSnippet('postgres', values)).toContain(
      'name: "O\'Brien\'s bot; DROP TABLE api_keys; --",',
    )
  })
})
