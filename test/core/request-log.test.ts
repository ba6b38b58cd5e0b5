import { Writable } from 'node:stream'
import { stripVTControlCharacters } from 'node:util'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { type ApiKeyProvider, apiKeyAuth } from '../../src/api/index.ts'
import {
  createLogger,
  errorHandler,
  type LogFormat,
  Redactor,
  requestLog,
} from '../../src/core/index.ts'

/** A logger writing into a string, in the given format, with no colours (not a terminal). */
function capture(format: LogFormat) {
  let text = ''
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk
      callback()
    },
  })
  // Colours depend on the terminal running the tests; the assertions read the text.
  const redactor = new Redactor().add('s3cr3t-value')
  return {
    logger: createLogger({ level: 'debug', format, destination, redactor }),
    text: () => stripVTControlCharacters(text),
  }
}

const provider: ApiKeyProvider = {
  async verifyKey(raw) {
    if (raw !== 'good-key')
      throw new (await import('../../src/core/index.ts')).UnauthenticatedError()
    return { id: 7, name: 'ci-bot', scopes: ['*'] }
  },
}

function app(logger: ReturnType<typeof createLogger>) {
  const hono = new Hono()
  hono.onError(errorHandler({ logger }))
  hono.use('*', requestLog({ logger }))
  hono.get('/open', (c) => c.json({ ok: true }))
  hono.get('/keyed', apiKeyAuth({ provider }), (c) => c.json({ ok: true }))
  hono.get('/broken', () => {
    throw new Error('database went away')
  })
  return hono
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('requestLog', () => {
  it('writes one JSON line per request with method, path, status, time and the key', async () => {
    const { logger, text } = capture('json')
    const hono = app(logger)
    await hono.request('/open?email=someone@example.com')
    await hono.request('/keyed', { headers: { Authorization: 'Bearer good-key' } })
    await settle()
    const lines = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({ method: 'GET', path: '/open', status: 200, level: 30 })
    expect(lines[0].ms).toEqual(expect.any(Number))
    expect(lines[0].actor).toBeUndefined()
    expect(lines[1]).toMatchObject({ path: '/keyed', status: 200, actor: 'key ci-bot' })
    expect(lines[1].msg).toMatch(/^GET \/keyed 200 [\d.]+ms key ci-bot$/)
    // The query string may hold personal data: it is not part of the line.
    expect(text()).not.toContain('someone@example.com')
  })

  it('logs a refused request with its status and a failed one at warn', async () => {
    const { logger, text } = capture('json')
    const hono = app(logger)
    expect((await hono.request('/keyed')).status).toBe(401)
    expect((await hono.request('/broken')).status).toBe(500)
    await settle()
    const lines = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const access = lines.filter((line) => line.method)
    expect(access.map((line) => [line.path, line.status, line.level])).toEqual([
      ['/keyed', 401, 30],
      ['/broken', 500, 40],
    ])
  })

  it('at debug, writes nothing under an info logger, and still logs a 5xx', async () => {
    const { logger: captured, text } = capture('json')
    captured.level = 'info'
    const hono = new Hono()
    hono.onError(errorHandler({ logger: captured }))
    hono.use('*', requestLog({ logger: captured, level: 'debug' }))
    hono.get('/open', (c) => c.json({ ok: true }))
    hono.get('/broken', () => {
      throw new Error('database went away')
    })
    await hono.request('/open')
    await hono.request('/broken')
    await settle()
    const access = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.method)
    expect(access.map((line) => [line.path, line.status])).toEqual([['/broken', 500]])
  })
})

describe('pretty logs', () => {
  it('prints a short line a person reads, with the fields after it and no JSON', async () => {
    const { logger, text } = capture('pretty')
    await app(logger).request('/keyed', { headers: { Authorization: 'Bearer good-key' } })
    logger.info({ password: 's3cr3t-value', note: 'kept' }, 'signed in with s3cr3t-value')
    await settle()
    const [request, signedIn] = text().trim().split('\n')
    // The short form says every field of the access line: none is repeated after it.
    expect(request).toMatch(/^\d\d:\d\d:\d\d INFO {2}GET \/keyed 200 [\d.]+ms key ci-bot$/)
    expect(request).not.toContain('{')
    // Secrets are scrubbed before the line is formatted.
    expect(signedIn).toContain('signed in with <redacted>')
    expect(signedIn).toContain('note=kept')
    logger.info({ status: 404, path: '/other' }, 'GET /keyed 404')
    await settle()
    expect(text().trim().split('\n')[2]).toMatch(/GET \/keyed 404 {2}path=\/other$/)
    expect(text()).not.toContain('s3cr3t-value')
  })

  it('prints an error with its stack below the line', async () => {
    const { logger, text } = capture('pretty')
    logger.error({ err: new Error('boom') }, 'request failed')
    await settle()
    expect(text()).toMatch(/ERROR request failed\n {4}Error: boom\n {8}at /)
  })
})
