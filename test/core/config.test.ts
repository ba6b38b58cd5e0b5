import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  ConfigError,
  envBoolean,
  envUrl,
  loadAppConfig,
  parseEnv,
  Secret,
} from '../../src/core/index.ts'

function configError(run: () => unknown): ConfigError {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('loadAppConfig', () => {
  it('has defaults for every variable', () => {
    expect(loadAppConfig({})).toEqual({
      env: 'development',
      port: 3000,
      host: '0.0.0.0',
      appUrl: 'http://localhost:3000',
      appUrlFromEnv: false,
      appName: 'kiln',
      databaseUrl: undefined,
      databaseConnectTimeoutMs: 5_000,
      databaseQueryTimeoutMs: undefined,
      databaseStatementTimeoutMs: 5_000,
      databaseSlowQueryConcurrency: undefined,
      databaseSlowQueryWaitMs: 5_000,
      redisUrl: undefined,
      redisCommandTimeoutMs: 5_000,
      logLevel: 'info',
      // The tests' standard output is no terminal: JSON, as a log collector would read it.
      logFormat: 'json',
      trustProxy: false,
      allowedHosts: [],
    })
  })

  it('reads and types every variable', () => {
    const config = loadAppConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      HOST: '127.0.0.1',
      APP_URL: 'https://app.example.com/',
      APP_NAME: 'shop',
      DATABASE_URL: 'postgres://u:p@db:5432/shop',
      DATABASE_CONNECT_TIMEOUT_MS: '3000',
      DATABASE_QUERY_TIMEOUT_MS: '4000',
      DATABASE_STATEMENT_TIMEOUT_MS: '2500',
      DATABASE_SLOW_QUERY_CONCURRENCY: '3',
      DATABASE_SLOW_QUERY_WAIT_MS: '1000',
      REDIS_URL: 'redis://cache:6379',
      REDIS_COMMAND_TIMEOUT_MS: '1500',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'pretty',
      TRUST_PROXY: 'yes',
      ALLOWED_HOSTS: 'node-1.internal:3000,[::1]:3000',
    })
    expect(config.databaseUrl?.reveal()).toBe('postgres://u:p@db:5432/shop')
    expect(config.redisUrl?.reveal()).toBe('redis://cache:6379')
    expect(JSON.stringify(config)).not.toContain('u:p@')
    expect(config).toEqual({
      env: 'production',
      port: 8080,
      host: '127.0.0.1',
      appUrl: 'https://app.example.com',
      appUrlFromEnv: true,
      appName: 'shop',
      databaseUrl: expect.any(Secret),
      databaseConnectTimeoutMs: 3_000,
      databaseQueryTimeoutMs: 4_000,
      databaseStatementTimeoutMs: 2_500,
      databaseSlowQueryConcurrency: 3,
      databaseSlowQueryWaitMs: 1_000,
      redisUrl: expect.any(Secret),
      redisCommandTimeoutMs: 1_500,
      logLevel: 'warn',
      logFormat: 'pretty',
      trustProxy: true,
      allowedHosts: ['node-1.internal:3000', '[::1]:3000'],
    })
  })

  it("names the app after the default it is given (the package's name) unless APP_NAME is set", () => {
    expect(loadAppConfig({}, { appName: 'ticket-tracker' }).appName).toBe('ticket-tracker')
    expect(loadAppConfig({ APP_NAME: 'Tickets' }, { appName: 'ticket-tracker' }).appName).toBe(
      'Tickets',
    )
    expect(loadAppConfig({}).appName).toBe('kiln')
  })

  it('refuses an ALLOWED_HOSTS that is not a list of host names', () => {
    expect(() => loadAppConfig({ ALLOWED_HOSTS: 'https://evil.example/' })).toThrow(/ALLOWED_HOSTS/)
  })

  it('takes the connection and command budgets as 1 or more whole milliseconds', () => {
    for (const name of ['DATABASE_CONNECT_TIMEOUT_MS', 'REDIS_COMMAND_TIMEOUT_MS']) {
      for (const value of ['0', '-1', '1.5', 'soon']) {
        const { problems } = configError(() => loadAppConfig({ [name]: value }))
        expect(Object.keys(problems), `${name}=${value}`).toEqual([name])
      }
    }
    expect(loadAppConfig({ DATABASE_QUERY_TIMEOUT_MS: '0' }).databaseQueryTimeoutMs).toBe(0)
  })

  it('takes DATABASE_STATEMENT_TIMEOUT_MS as whole milliseconds, 0 for no limit', () => {
    expect(loadAppConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).databaseStatementTimeoutMs).toBe(0)
    for (const value of ['-1', '1.5', 'soon']) {
      expect(
        Object.keys(
          configError(() => loadAppConfig({ DATABASE_STATEMENT_TIMEOUT_MS: value })).problems,
        ),
      ).toEqual(['DATABASE_STATEMENT_TIMEOUT_MS'])
    }
  })

  it("takes the slow queries' turns: whole queries (1 or more, default unset) and a wait (0 or more)", () => {
    expect(loadAppConfig({})).toMatchObject({
      databaseSlowQueryConcurrency: undefined,
      databaseSlowQueryWaitMs: 5_000,
    })
    expect(loadAppConfig({ DATABASE_SLOW_QUERY_WAIT_MS: '0' }).databaseSlowQueryWaitMs).toBe(0)
    for (const [name, value] of [
      ['DATABASE_SLOW_QUERY_CONCURRENCY', '0'],
      ['DATABASE_SLOW_QUERY_CONCURRENCY', '2.5'],
      ['DATABASE_SLOW_QUERY_WAIT_MS', '-1'],
      ['DATABASE_SLOW_QUERY_WAIT_MS', 'later'],
    ] as const) {
      expect(Object.keys(configError(() => loadAppConfig({ [name]: value })).problems)).toEqual([
        name,
      ])
    }
  })

  it('takes the APP_URL default from PORT', () => {
    expect(loadAppConfig({ PORT: '4000' }).appUrl).toBe('http://localhost:4000')
  })

  it('accepts every database URL form', () => {
    for (const url of [
      'postgresql://h/db',
      'sqlite::memory:',
      'sqlite:data.db',
      'file:x.db',
      'pglite:',
    ]) {
      expect(loadAppConfig({ DATABASE_URL: url }).databaseUrl?.reveal()).toBe(url)
    }
  })

  it('treats empty variables as unset, as a .env file line `NAME=` means', () => {
    expect(loadAppConfig({ PORT: '', REDIS_URL: '', APP_URL: '' })).toMatchObject({
      port: 3000,
      redisUrl: undefined,
      appUrlFromEnv: false,
    })
  })

  it('reports every invalid variable in one message, naming each and never its value', () => {
    const env = {
      NODE_ENV: 'staging-secret-1',
      PORT: 'port-secret-2',
      APP_URL: 'ftp://secret-3.example.com',
      DATABASE_URL: 'mysql://user:secret-4@db/app',
      REDIS_URL: 'http://:secret-5@cache:6379',
      LOG_LEVEL: 'secret-6',
      TRUST_PROXY: 'secret-7',
    }
    const error = configError(() => loadAppConfig(env))
    expect(Object.keys(error.problems).sort()).toEqual(Object.keys(env).sort())
    expect(error.message).toBe(
      [
        'Invalid configuration:',
        '  NODE_ENV: expected development, production or test',
        '  PORT: expected a port number',
        '  APP_URL: expected an absolute http(s) URL, e.g. https://app.example.com',
        '  DATABASE_URL: expected a postgres://… URL, sqlite:<path> / file:<path> for SQLite, or pglite:<dir> for embedded Postgres',
        '  REDIS_URL: expected a redis://… or rediss://… URL',
        '  LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent',
        '  TRUST_PROXY: expected true, false, a number of proxies, or a comma list of proxy IPs/CIDRs',
      ].join('\n'),
    )
    expect(error.message).not.toMatch(/secret/)
    expect(error.stack ?? '').not.toMatch(/secret-\d/)
  })

  it('checks the port range', () => {
    expect(configError(() => loadAppConfig({ PORT: '70000' })).problems).toEqual({
      PORT: 'expected a port from 1 to 65535',
    })
    expect(configError(() => loadAppConfig({ PORT: '80.5' })).problems).toEqual({
      PORT: 'expected a port number',
    })
  })
})

describe('the cursor key (appKey)', () => {
  const secret = 'x'.repeat(32)
  it('is APP_KEY, else MCP_TOKEN_SECRET that every instance shares, else none', () => {
    const app = 'a'.repeat(32)
    expect(loadAppConfig({ APP_KEY: app, MCP_TOKEN_SECRET: secret }).appKey?.reveal()).toBe(app)
    expect(loadAppConfig({ MCP_TOKEN_SECRET: secret }).appKey?.reveal()).toBe(secret)
    expect(loadAppConfig({ MCP_TOKEN_SECRET: 'short' }).appKey).toBeUndefined()
    expect(loadAppConfig({}).appKey).toBeUndefined()
  })
})

describe('parseEnv with a capability schema', () => {
  const messagingSchema = z.object({
    MSG_ACCESS_TOKEN: z.string().min(10, 'expected the access token from the provider'),
    MSG_APP_SECRET: z.string().min(10, 'expected the app secret'),
    MSG_GRAPH_API_URL: envUrl('expected an http(s) URL', ['http:', 'https:']).default(
      'https://graph.example.com',
    ),
    MSG_ENABLED: envBoolean.default(true),
    MSG_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  })

  it('returns typed values with defaults', () => {
    const parsed = parseEnv(messagingSchema, {
      MSG_ACCESS_TOKEN: 'token-0123456789',
      MSG_APP_SECRET: 'secret-0123456789',
      MSG_ENABLED: 'off',
      UNRELATED: 'ignored',
    })
    expect(parsed).toEqual({
      MSG_ACCESS_TOKEN: 'token-0123456789',
      MSG_APP_SECRET: 'secret-0123456789',
      MSG_GRAPH_API_URL: 'https://graph.example.com',
      MSG_ENABLED: false,
      MSG_TIMEOUT_MS: 10_000,
    })
  })

  it('says which variables are missing and which are invalid, under its heading', () => {
    const error = configError(() =>
      parseEnv(
        messagingSchema,
        { MSG_APP_SECRET: 'short', MSG_GRAPH_API_URL: 'not a url', MSG_TIMEOUT_MS: '-1' },
        'Messaging is not configured',
      ),
    )
    expect(error.message.split('\n')[0]).toBe('Messaging is not configured:')
    expect(error.problems).toEqual({
      MSG_ACCESS_TOKEN: 'is required',
      MSG_APP_SECRET: 'expected the app secret',
      MSG_GRAPH_API_URL: 'expected an http(s) URL',
      MSG_TIMEOUT_MS: expect.any(String),
    })
    expect(error.message).not.toContain('short')
    expect(error.message).not.toContain('not a url')
    expect(error.name).toBe('ConfigError')
  })

  it('envBoolean accepts the usual spellings', () => {
    const schema = z.object({ FLAG: envBoolean })
    for (const yes of ['true', '1', 'YES', 'on'])
      expect(parseEnv(schema, { FLAG: yes }).FLAG).toBe(true)
    for (const no of ['false', '0', 'no', 'Off'])
      expect(parseEnv(schema, { FLAG: no }).FLAG).toBe(false)
    expect(configError(() => parseEnv(schema, { FLAG: 'maybe' })).problems).toEqual({
      FLAG: 'expected true or false',
    })
  })
})
