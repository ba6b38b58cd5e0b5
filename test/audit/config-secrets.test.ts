import { randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { posts } from '../../examples/demo/src/schema.ts'
import { defineListQuery } from '../../src/api/query/index.ts'
import { loadCdnConfig } from '../../src/cdn/index.ts'
import {
  BadRequestError,
  createLogger,
  DependencyError,
  errorHandler,
  loadAppConfig,
  Redactor,
  Secret,
  silentLogger,
} from '../../src/core/index.ts'
import { loadMessagingConfig } from '../../src/messaging/index.ts'
import { loadOAuthConfig } from '../../src/oauth/index.ts'
import { createStorageFromEnv, loadStorageConfig } from '../../src/storage/index.ts'

/** Long, unique test-only values: finding one anywhere means it leaked. */
const unique = (name: string) => `${name}-${randomBytes(24).toString('hex')}`
const SECRETS = {
  MCP_TOKEN_SECRET: unique('cfg-mcp-token-secret'),
  MSG_APP_SECRET: unique('cfg-msg-app-secret'),
  MSG_ACCESS_TOKEN: unique('cfg-msg-access-token'),
  MSG_VERIFY_TOKEN: unique('cfg-msg-verify-token'),
  CDN_PURGE_TOKEN: unique('cfg-cdn-purge-token'),
  OBJSTORE_SECRET_ACCESS_KEY: unique('cfg-objstore-secret'),
  STORAGE_URL_SECRET: unique('cfg-storage-url-secret'),
  CURSOR_SECRET: unique('cfg-cursor-secret'),
  DATABASE_PASSWORD: unique('cfg-database-password'),
  REDIS_PASSWORD: unique('cfg-redis-password'),
}
const VALUES = Object.values(SECRETS)

/** Each capability's configuration, loaded the documented way, and where its secrets live. */
function configurations(): Array<{ name: string; config: object; secrets: Secret[] }> {
  const oauth = loadOAuthConfig(
    { MCP_TOKEN_SECRET: SECRETS.MCP_TOKEN_SECRET, APP_URL: 'https://app.example.com' },
    { production: true },
  )
  const messaging = loadMessagingConfig({
    MSG_APP_SECRET: SECRETS.MSG_APP_SECRET,
    MSG_ACCESS_TOKEN: SECRETS.MSG_ACCESS_TOKEN,
    MSG_VERIFY_TOKEN: SECRETS.MSG_VERIFY_TOKEN,
    MSG_PHONE_NUMBER_ID: '100000000000001',
  })
  const cdn = loadCdnConfig({
    CDN_PROVIDER: 'bunny',
    CDN_URL: 'https://cdn.example.com',
    CDN_PURGE_TOKEN: SECRETS.CDN_PURGE_TOKEN,
  })
  const storageEnv = {
    OBJSTORE_BUCKET: 'media',
    OBJSTORE_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    OBJSTORE_SECRET_ACCESS_KEY: SECRETS.OBJSTORE_SECRET_ACCESS_KEY,
  }
  const storageConfig = loadStorageConfig(storageEnv)
  const storage = createStorageFromEnv(storageEnv, {
    temporaryUrls: {
      secret: new Secret(SECRETS.STORAGE_URL_SECRET),
      baseUrl: 'https://app.example.com/files/signed',
    },
  })
  const listQuery = defineListQuery(posts, { cursorSecret: SECRETS.CURSOR_SECRET })
  const app = loadAppConfig({
    DATABASE_URL: `postgres://app:${SECRETS.DATABASE_PASSWORD}@db.internal:5432/app`,
    REDIS_URL: `redis://:${SECRETS.REDIS_PASSWORD}@cache.internal:6379`,
  })
  return [
    { name: 'AppConfig', config: app, secrets: [app.databaseUrl!, app.redisUrl!] },
    { name: 'OAuthConfig', config: oauth, secrets: [oauth.secret] },
    { name: 'MessagingConfig', config: messaging, secrets: messaging.secrets() },
    { name: 'CdnConfig', config: cdn, secrets: [cdn.purgeToken!] },
    {
      name: 'StorageConfig',
      config: storageConfig,
      secrets: [storageConfig.objectStore!.secretAccessKey!],
    },
    { name: 'Storage', config: storage, secrets: [] },
    { name: 'list query', config: listQuery, secrets: [listQuery.cursorSecret!] },
  ]
}

/**
 * A logger whose Redactor knows none of the values: what stays out of its lines stays out
 * because of the `Secret` type, not because a value was registered for line scrubbing.
 */
function bareLogger() {
  const lines: string[] = []
  const logger = createLogger({
    level: 'trace',
    redactor: new Redactor(),
    destination: { write: (line: string) => void lines.push(line) },
  })
  return { logger, lines }
}

function expectNoSecret(label: string, text: string) {
  for (const value of VALUES) expect(text, `${label}`).not.toContain(value)
}

describe('secrets audit: configuration objects hold every secret as a Secret', () => {
  it.each(configurations())(
    '$name: each secret is a Secret that reveals its value',
    ({ secrets }) => {
      for (const secret of secrets) {
        expect(secret).toBeInstanceOf(Secret)
        expect(VALUES.some((value) => secret.reveal().includes(value))).toBe(true)
      }
    },
  )

  it.each(configurations())(
    '$name prints without its secrets: inspect, JSON, String, templates',
    ({ name, config, secrets }) => {
      expectNoSecret(`${name} inspect`, inspect(config, { depth: Number.POSITIVE_INFINITY }))
      expectNoSecret(`${name} inspect showHidden`, inspect(config, { showHidden: true, depth: 8 }))
      expectNoSecret(`${name} JSON`, safeJson(config))
      expectNoSecret(`${name} JSON nested`, safeJson({ config, list: [config] }))
      expectNoSecret(`${name} String`, String(config))
      expectNoSecret(`${name} spread`, inspect({ ...config }, { depth: 8 }))
      expectNoSecret(
        `${name} structured clone`,
        inspect(structuredCloneOrSelf(config), { depth: 8 }),
      )
      for (const secret of secrets) {
        expect(`${secret}`).toBe('<redacted>')
        expect(String(secret)).toBe('<redacted>')
        expect(JSON.stringify({ secret })).toBe('{"secret":"<redacted>"}')
        expect(inspect({ secret })).toBe('{ secret: <redacted> }')
        expect(`${secret}`.concat(String(secret))).not.toContain(secret.reveal())
      }
    },
  )

  it.each(configurations())(
    '$name never reaches a log line, whatever shape it is logged in',
    ({ name, config, secrets }) => {
      const { logger, lines } = bareLogger()
      // Key names pino's own redaction paths know (`secret`, `token`, `*.accessToken`…) and ones
      // it does not: a path match must not crash on a Secret or a config class, nor be needed.
      logger.info({ config }, 'boot')
      logger.info(config, 'boot flat')
      logger.info({ nested: { deeper: { config } } }, 'boot nested')
      logger.info({ secret: secrets[0], token: secrets[0], other: secrets[0] }, 'bare secrets')
      logger.info({ wrap: { secret: secrets[0], token: secrets[0], accessToken: secrets[0] } })
      logger.debug(`template ${secrets.join(' ')} ${secrets[0]}`)
      logger.error({ err: new Error(`failed with ${secrets[0]}`, { cause: config }) }, 'failed')
      logger.warn({ list: [config, ...secrets] }, 'list')
      expect(lines.length).toBe(8)
      for (const line of lines) expectNoSecret(`${name} log line`, line)
    },
  )

  it.each(configurations())(
    '$name never reaches an error response',
    async ({ name, config, secrets }) => {
      const { logger, lines } = bareLogger()
      const app = new Hono()
      app.onError(errorHandler({ logger }))
      app.get('/refused', () => {
        throw new BadRequestError(`refused with ${secrets[0]}`, {
          cause: config,
          details: { secret: secrets[0], secrets },
        })
      })
      app.get('/dependency', () => {
        throw new DependencyError(`failed with ${secrets[0]}`, { cause: config })
      })
      app.get('/crash', () => {
        throw new Error(`crashed with ${secrets[0]} and ${safeJson(config)}`, { cause: config })
      })
      for (const path of ['/refused', '/dependency', '/crash']) {
        const response = await app.request(path)
        expect(response.status).toBeGreaterThanOrEqual(400)
        const text = `${[...response.headers].join('\n')}\n${await response.text()}`
        expectNoSecret(`${name} ${path} response`, text)
      }
      for (const line of lines) expectNoSecret(`${name} error log`, line)
    },
  )

  it('one mechanism: no configuration patches toJSON or keeps secrets aside', () => {
    for (const { config } of configurations()) {
      expect(Object.getOwnPropertyNames(config)).not.toContain('toJSON')
      expect(Object.getOwnPropertySymbols(config)).toEqual([])
    }
    // Silent loggers and the defaults keep working with Secrets in place.
    silentLogger().info({ config: configurations() })
  })
})

/** JSON text, or the reason there is none (a Drizzle table inside a definition is circular). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch (error) {
    return `<not serializable: ${(error as Error).message}>`
  }
}

/** A structured clone when the value allows one (plain data); the value itself otherwise. */
function structuredCloneOrSelf(value: object): unknown {
  try {
    return structuredClone(value)
  } catch {
    return value
  }
}
