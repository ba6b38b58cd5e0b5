import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError, createLogger, Redactor, Secret } from '../../src/core/index.ts'
import {
  isMessagingConfigured,
  loadMessagingConfig,
  MessagingConfig,
  messagingEnvStatus,
} from '../../src/messaging/index.ts'

const env = {
  MSG_APP_SECRET: 'app-secret-value-1234',
  MSG_ACCESS_TOKEN: 'EAAaccess-token-value-5678',
  MSG_PHONE_NUMBER_ID: '100000000000001',
  MSG_VERIFY_TOKEN: 'verify-token-value-90',
}

describe('loadMessagingConfig', () => {
  it('reads the four variables and defaults the Graph API URL', () => {
    const config = loadMessagingConfig(env)
    expect(config.appSecret.reveal()).toBe(env.MSG_APP_SECRET)
    expect(config.accessToken.reveal()).toBe(env.MSG_ACCESS_TOKEN)
    expect(config.verifyToken.reveal()).toBe(env.MSG_VERIFY_TOKEN)
    expect(config.phoneNumberId).toBe('100000000000001')
    expect(config.graphApiUrl).toBe('https://graph.facebook.com')
  })

  it('takes MSG_GRAPH_API_URL without its trailing slash', () => {
    const config = loadMessagingConfig({ ...env, MSG_GRAPH_API_URL: 'http://127.0.0.1:4010/' })
    expect(config.graphApiUrl).toBe('http://127.0.0.1:4010')
  })

  it('names every missing variable in one error, and no value', () => {
    let error: unknown
    try {
      loadMessagingConfig({ MSG_APP_SECRET: env.MSG_APP_SECRET, MSG_VERIFY_TOKEN: '' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as ConfigError).message
    expect(message).toContain('Messaging is not configured')
    expect(Object.keys((error as ConfigError).problems).sort()).toEqual([
      'MSG_ACCESS_TOKEN',
      'MSG_PHONE_NUMBER_ID',
      'MSG_VERIFY_TOKEN',
    ])
    expect(message).toContain('MSG_ACCESS_TOKEN: is required')
    expect(message).not.toContain(env.MSG_APP_SECRET)
  })

  it('rejects a phone number where the phone number id belongs, and a bad URL', () => {
    expect(() =>
      loadMessagingConfig({
        ...env,
        MSG_PHONE_NUMBER_ID: '+1 202 555 0100',
        MSG_GRAPH_API_URL: 'ftp://x',
      }),
    ).toThrow(
      /MSG_PHONE_NUMBER_ID: expected the numeric id[\s\S]*MSG_GRAPH_API_URL: expected an absolute http/,
    )
  })

  it('registers the secrets with the redactor: even revealed, they never reach a log line', () => {
    const redactor = new Redactor()
    const config = loadMessagingConfig(env, { redactor })
    const lines: string[] = []
    const logger = createLogger({
      redactor,
      destination: { write: (l: string) => void lines.push(l) },
    })
    logger.info(
      { secret: config.appSecret.reveal(), nested: { value: config.accessToken.reveal() } },
      `token ${config.verifyToken.reveal()}`,
    )
    const text = lines.join('')
    for (const value of [env.MSG_APP_SECRET, env.MSG_ACCESS_TOKEN, env.MSG_VERIFY_TOKEN]) {
      expect(text).not.toContain(value)
    }
    expect(text).toContain('<redacted>')
  })

  it('prints, serializes and logs the config object with the secrets redacted', () => {
    const config = loadMessagingConfig(env)
    const outputs = [JSON.stringify(config), inspect(config), String(JSON.stringify({ config }))]
    const lines: string[] = []
    createLogger({ destination: { write: (l: string) => void lines.push(l) } }).info(
      { config },
      'boot',
    )
    outputs.push(lines.join(''))
    for (const out of outputs) {
      for (const value of [env.MSG_APP_SECRET, env.MSG_ACCESS_TOKEN, env.MSG_VERIFY_TOKEN]) {
        expect(out).not.toContain(value)
      }
      expect(out).toContain('100000000000001')
    }
    for (const secret of config.secrets()) expect(secret).toBeInstanceOf(Secret)
  })

  it('MessagingConfig refuses an empty secret at start-up', () => {
    expect(
      () =>
        new MessagingConfig({
          appSecret: '',
          accessToken: 'a',
          verifyToken: 'v',
          phoneNumberId: '1',
        }),
    ).toThrow(TypeError)
  })
})

describe('messagingEnvStatus / isMessagingConfigured', () => {
  it('says which variables are present and missing', () => {
    expect(messagingEnvStatus({ MSG_APP_SECRET: 'x', MSG_VERIFY_TOKEN: '' })).toEqual({
      present: ['MSG_APP_SECRET'],
      missing: ['MSG_ACCESS_TOKEN', 'MSG_PHONE_NUMBER_ID', 'MSG_VERIFY_TOKEN'],
    })
    expect(isMessagingConfigured({})).toBe(false)
    expect(isMessagingConfigured(env)).toBe(true)
  })
})
