import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import {
  AUTO_EXCLUDED_FIELDS,
  CREDENTIAL_STEMS,
  isCredentialField,
} from '../../src/core/credentials.ts'
import { createLogger, type Logger, Redactor, silentLogger } from '../../src/core/index.ts'

const camelCase = (name: string) =>
  name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const apiKey = (env: 'live' | 'test') =>
  `kl_${env}_${Array.from(randomBytes(43), (b) => BASE62[b % 62]).join('')}`
const jwt =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'

// biome-ignore lint/suspicious/noExplicitAny: log lines are free-form JSON read by the assertions.
type LogLine = any

/** A logger whose lines land in an array, and the raw text written. */
function capture(redactor = new Redactor()): {
  logger: Logger
  text(): string
  lines(): LogLine[]
} {
  let text = ''
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk
      callback()
    },
  })
  return {
    logger: createLogger({ level: 'debug', redactor, destination }),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  }
}

describe('Redactor.scrub', () => {
  it('scrubs registered values wherever they appear', () => {
    const redactor = new Redactor().add('app-secret-value', undefined, 'abc')
    expect(redactor.scrub('key=app-secret-value; again app-secret-value')).toBe(
      'key=<redacted>; again <redacted>',
    )
    // Values shorter than 6 characters are not registered (they would scrub ordinary words).
    expect(redactor.scrub('abc')).toBe('abc')
  })

  it('scrubs kiln API keys, JWTs and Bearer credentials by shape', () => {
    const live = apiKey('live')
    const test = apiKey('test')
    const redactor = new Redactor()
    expect(redactor.scrub(`got ${live} and ${test}.`)).toBe('got <redacted> and <redacted>.')
    expect(redactor.scrub(`token ${jwt} end`)).toBe('token <redacted> end')
    expect(redactor.scrub('Authorization: Bearer opaque-credential-123')).toBe(
      'Authorization: Bearer <redacted>',
    )
    expect(redactor.scrub('authorization: bearer abc.def')).toBe('authorization: bearer <redacted>')
  })

  it('leaves ordinary text alone', () => {
    const text = 'kl_live_short is not a key; eyJ alone is not a JWT; bearer-less text'
    expect(new Redactor().scrub(text)).toBe(text)
  })

  it('scrubs secret-named keys of JSON text at any depth', () => {
    const json = JSON.stringify({
      a: { b: { password: 'p@ss "quoted"', token_count: 3 } },
      secret: 42,
    })
    expect(JSON.parse(new Redactor().scrub(json))).toEqual({
      a: { b: { password: '<redacted>', token_count: 3 } },
      secret: '<redacted>',
    })
  })
})

describe('Redactor.scrub: the credential rule', () => {
  it('scrubs every key the credential rule catches, as the API never shows them', () => {
    const json = JSON.stringify({
      user: {
        otp_secret: 'JBSWY3DP',
        reset_password_token: 'r3set',
        passwordDigest: '$2b$10$abc',
        api_key_hash: 'c0ffee',
        private_key: '-----BEGIN',
        encrypted_ssn: 'xx',
        token_count: 3,
        name: 'Ada',
      },
    })
    expect(JSON.parse(new Redactor().scrub(json))).toEqual({
      user: {
        otp_secret: '<redacted>',
        reset_password_token: '<redacted>',
        passwordDigest: '<redacted>',
        api_key_hash: '<redacted>',
        private_key: '<redacted>',
        encrypted_ssn: '<redacted>',
        token_count: 3,
        name: 'Ada',
      },
    })
  })

  it('the stems of the cheap first test hold every name the credential rule catches', () => {
    const names = [
      ...AUTO_EXCLUDED_FIELDS,
      ...['password_digest', 'encrypted_password', 'reset_password_token', 'ssh_passphrase'],
      ...['remember_digest', 'client_secret', 'webhook_secret', 'access_token', 'refresh_token'],
      ...['otp_secret', 'otp_backup_codes', 'recovery_code', 'private_key', 'jwt_private_key_pem'],
      ...['api_key_hash', 'encrypted_otp_secret', 'salt', 'password_salt'],
      ...['passwd', 'pwd', 'user_pwd', 'token_hash', 'refresh_token_hash', 'session_key'],
      ...['signing_key', 'encryption_key', 'master_key', 'totp_seed', 'mfa_seed', 'apikey'],
    ]
    for (const name of [...names, ...names.map(camelCase)]) {
      expect(isCredentialField(name), name).toBe(true)
      expect(CREDENTIAL_STEMS.test(name), name).toBe(true)
    }
  })

  it('reads keys and values whole: a value that names a credential is not a key', () => {
    const json = JSON.stringify({ msg: 'the "password": field', list: ['password', 'x'] })
    expect(new Redactor().scrub(json)).toBe(json)
  })
})

describe('createLogger', () => {
  it('writes JSON lines to the destination at the level given', () => {
    const { logger, lines } = capture()
    logger.debug({ n: 1 }, 'debug line')
    logger.info('info line')
    expect(lines().map((l) => [l.level, l.msg, l.n])).toEqual([
      [20, 'debug line', 1],
      [30, 'info line', undefined],
    ])
  })

  it('scrubs secrets from message strings', () => {
    const key = apiKey('live')
    const { logger, text } = capture(new Redactor().add('registered-secret'))
    logger.info(`verifying ${key} with registered-secret and Bearer ${jwt}`)
    expect(text()).not.toContain(key)
    expect(text()).not.toContain('registered-secret')
    expect(text()).not.toContain(jwt)
    expect(text()).toContain('verifying <redacted> with <redacted> and Bearer <redacted>')
  })

  it('scrubs secrets from nested objects', () => {
    const key = apiKey('test')
    const { logger, text, lines } = capture(new Redactor().add('s3cr3t-"quote'))
    logger.info(
      {
        request: { deep: { deeper: { password: 'hunter2-pass', note: `key ${key}` } } },
        config: { value: 's3cr3t-"quote' },
        list: [{ accessToken: 'tok-1234567' }],
      },
      'nested',
    )
    for (const secret of ['hunter2-pass', key, 's3cr3t-', 'tok-1234567']) {
      expect(text()).not.toContain(secret)
    }
    const [line] = lines()
    expect(line.request.deep.deeper).toEqual({ password: '<redacted>', note: 'key <redacted>' })
    expect(line.config.value).toBe('<redacted>')
  })

  it('scrubs secrets from errors and their causes', () => {
    const { logger, text, lines } = capture(new Redactor().add('db-password-123'))
    const cause = new Error('connect failed for postgres://app:db-password-123@db/app')
    const error = new Error(`request with Bearer ${jwt} failed`, { cause })
    logger.error({ err: error }, 'dependency failed')
    expect(text()).not.toContain('db-password-123')
    expect(text()).not.toContain(jwt)
    const [line] = lines()
    expect(line.err.message).toContain('Bearer <redacted>')
    expect(line.err.stack).toContain('postgres://app:<redacted>@db/app')
  })

  it("applies pino's redact paths to well-known fields", () => {
    const { logger, lines } = capture()
    logger.info(
      {
        req: { headers: { authorization: 'Basic dXNlcjpwYXNz', cookie: 'sid=abcdef' } },
        headers: { authorization: 'Basic dXNlcjpwYXNz' },
        user: { password: 'plain-password', name: 'Ada' },
        rawKey: 'anything',
      },
      'request',
    )
    const [line] = lines()
    expect(line.req.headers).toEqual({ authorization: '<redacted>', cookie: '<redacted>' })
    expect(line.headers.authorization).toBe('<redacted>')
    expect(line.user).toEqual({ password: '<redacted>', name: 'Ada' })
    expect(line.rawKey).toBe('<redacted>')
  })

  it('silentLogger writes nothing', () => {
    const logger = silentLogger()
    expect(logger.level).toBe('silent')
    logger.error('nothing')
  })
})
