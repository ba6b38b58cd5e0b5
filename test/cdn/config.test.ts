import { inspect } from 'node:util'
import { cdnUrl, createPurgeApi, InvalidPurgePathError, loadCdnConfig } from 'kilnjs/cdn'
import { ConfigError, Redactor } from 'kilnjs/core'
import { afterEach, describe, expect, it } from 'vitest'
import { LEGACY_CDN_VARIABLES } from '../../src/cdn/config.ts'
import { normalizePurgePaths } from '../../src/cdn/purge/paths.ts'
import { capturingLogger } from './support/logger.ts'
import { type StandIn, startStandIn } from './support/stand-in.ts'

const TOKEN = 'purge-token-0123456789abcdef'

describe('cdnUrl', () => {
  it('joins base and path with one slash, no network, no encoding', () => {
    expect(cdnUrl('https://cdn.example.com', 'a/b.png')).toBe('https://cdn.example.com/a/b.png')
    expect(cdnUrl('https://cdn.example.com/', '/a/b.png')).toBe('https://cdn.example.com/a/b.png')
    expect(cdnUrl('https://cdn.example.com///', '///a.png')).toBe('https://cdn.example.com/a.png')
    expect(cdnUrl('https://cdn.example.com/static', 'a.png')).toBe(
      'https://cdn.example.com/static/a.png',
    )
  })
})

describe('CDN configuration', () => {
  it('defaults to the DigitalOcean adapter with nothing set', () => {
    const { logger, lines } = capturingLogger()
    const config = loadCdnConfig({}, { logger })
    expect(config).toMatchObject({
      url: undefined,
      provider: 'digitalocean',
      purgeToken: undefined,
      purgeZone: undefined,
      deprecated: [],
    })
    expect(lines).toEqual([])
  })

  it('reads the current variables', () => {
    const config = loadCdnConfig({
      CDN_URL: 'https://cdn.example.com',
      CDN_PROVIDER: 'cloudflare',
      CDN_PURGE_TOKEN: TOKEN,
      CDN_PURGE_ZONE: 'zone-1',
      CDN_PURGE_API_URL: 'http://127.0.0.1:1',
    })
    expect(config.provider).toBe('cloudflare')
    expect(config.url).toBe('https://cdn.example.com')
    expect(config.purgeToken?.reveal()).toBe(TOKEN)
    expect(config.purgeZone).toBe('zone-1')
    expect(config.purgeApiUrl).toBe('http://127.0.0.1:1')
  })

  it.each([
    [
      { CDN_PROVIDER: 'fastly' },
      'CDN_PROVIDER: expected one of none, digitalocean, bunny, cloudflare',
    ],
    [{ CDN_URL: 'cdn.example.com' }, 'CDN_URL: expected an absolute http(s) URL'],
    [{ CDN_PROVIDER: 'bunny' }, 'CDN_URL: is required for CDN_PROVIDER=bunny'],
    [
      { CDN_PROVIDER: 'cloudflare', CDN_URL: 'https://c.example.com', CDN_PURGE_TOKEN: TOKEN },
      'CDN_PURGE_ZONE: is required for CDN_PROVIDER=cloudflare',
    ],
    [{ CDN_PURGE_ZONE: 'endpoint' }, 'CDN_PURGE_TOKEN: is required when CDN_PURGE_ZONE is set'],
    [
      { BUNNY_CDN_URL: 'https://b.example.com', CLOUDFLARE_CDN_URL: 'https://c.example.com' },
      'CDN_PROVIDER: is required: both BUNNY_CDN_URL and CLOUDFLARE_CDN_URL are set',
    ],
  ])('names the bad variable: %j', (env, message) => {
    expect(() => loadCdnConfig(env, { logger: capturingLogger().logger })).toThrow(ConfigError)
    expect(() => loadCdnConfig(env, { logger: capturingLogger().logger })).toThrow(message)
  })

  describe('legacy variables', () => {
    const cases: [string, Record<string, string>, Record<string, unknown>][] = [
      [
        'DIGITALOCEAN_CDN_URL',
        { DIGITALOCEAN_CDN_URL: 'https://do.example.com' },
        { url: 'https://do.example.com', provider: 'digitalocean' },
      ],
      [
        'BUNNY_CDN_URL',
        { BUNNY_CDN_URL: 'https://b.example.com', CDN_PURGE_TOKEN: TOKEN },
        { url: 'https://b.example.com', provider: 'bunny' },
      ],
      [
        'CLOUDFLARE_CDN_URL',
        {
          CLOUDFLARE_CDN_URL: 'https://c.example.com',
          CDN_PURGE_TOKEN: TOKEN,
          CDN_PURGE_ZONE: 'z',
        },
        { url: 'https://c.example.com', provider: 'cloudflare' },
      ],
      [
        'DIGITALOCEAN_CDN_ENDPOINT_ID',
        { DIGITALOCEAN_CDN_ENDPOINT_ID: 'ep-1', CDN_PURGE_TOKEN: TOKEN },
        { purgeZone: 'ep-1' },
      ],
      [
        'CLOUDFLARE_ZONE_ID',
        {
          CDN_PROVIDER: 'cloudflare',
          CDN_URL: 'https://c.example.com',
          CDN_PURGE_TOKEN: TOKEN,
          CLOUDFLARE_ZONE_ID: 'z-1',
        },
        { purgeZone: 'z-1' },
      ],
      [
        'DIGITALOCEAN_TOKEN',
        { DIGITALOCEAN_TOKEN: TOKEN, CDN_PURGE_ZONE: 'ep' },
        { provider: 'digitalocean' },
      ],
      [
        'BUNNY_API_KEY',
        { CDN_PROVIDER: 'bunny', CDN_URL: 'https://b.example.com', BUNNY_API_KEY: TOKEN },
        { provider: 'bunny' },
      ],
      [
        'CLOUDFLARE_API_TOKEN',
        {
          CDN_PROVIDER: 'cloudflare',
          CDN_URL: 'https://c.example.com',
          CLOUDFLARE_API_TOKEN: TOKEN,
          CDN_PURGE_ZONE: 'z',
        },
        { provider: 'cloudflare' },
      ],
    ]

    it.each(cases)(
      '%s is read as a fallback with one deprecation warning',
      (name, env, expected) => {
        const { logger, lines } = capturingLogger()
        const config = loadCdnConfig(env, { logger })
        expect(config).toMatchObject(expected)
        expect(config.deprecated).toEqual([name])
        if (name.includes('TOKEN') || name.includes('KEY')) {
          expect(config.purgeToken?.reveal()).toBe(TOKEN)
        }
        expect(lines).toHaveLength(1)
        const line = JSON.parse(lines[0]!) as { level: number; msg: string; variable: string }
        expect(line.level).toBe(40)
        expect(line.variable).toBe(name)
        expect(line.msg).toBe(
          `${name} is deprecated: set ${LEGACY_CDN_VARIABLES[name as keyof typeof LEGACY_CDN_VARIABLES]} instead`,
        )
      },
    )

    it('lets the current variables win, without warnings', () => {
      const { logger, lines } = capturingLogger()
      const config = loadCdnConfig(
        {
          CDN_URL: 'https://new.example.com',
          CDN_PURGE_TOKEN: 'new-token-123456',
          CDN_PURGE_ZONE: 'new-zone',
          DIGITALOCEAN_CDN_URL: 'https://old.example.com',
          DIGITALOCEAN_TOKEN: 'old-token-123456',
          DIGITALOCEAN_CDN_ENDPOINT_ID: 'old-zone',
        },
        { logger },
      )
      expect(config.url).toBe('https://new.example.com')
      expect(config.purgeToken?.reveal()).toBe('new-token-123456')
      expect(config.purgeZone).toBe('new-zone')
      expect(lines).toEqual([])
    })

    it('lets CDN_PROVIDER win over the provider a legacy URL implies', () => {
      const { logger } = capturingLogger()
      const config = loadCdnConfig(
        { CDN_PROVIDER: 'none', BUNNY_CDN_URL: 'https://b.example.com' },
        { logger },
      )
      expect(config.provider).toBe('none')
      expect(config.url).toBe('https://b.example.com')
    })

    it('warns through process warnings when no logger is given', async () => {
      const warnings: Error[] = []
      const listener = (warning: Error) => warnings.push(warning)
      process.on('warning', listener)
      try {
        loadCdnConfig({ DIGITALOCEAN_CDN_URL: 'https://do.example.com' })
        await new Promise((resolve) => setImmediate(resolve))
      } finally {
        process.off('warning', listener)
      }
      expect(warnings.map((w) => [w.name, w.message])).toEqual([
        ['DeprecationWarning', 'DIGITALOCEAN_CDN_URL is deprecated: set CDN_URL instead'],
      ])
    })
  })
})

describe('CDN_PURGE_TOKEN redaction', () => {
  const env = {
    CDN_PROVIDER: 'bunny',
    CDN_URL: 'https://cdn.example.com',
    CDN_PURGE_TOKEN: TOKEN,
  }

  it('prints <redacted> in util.inspect, JSON.stringify, String() and template strings', () => {
    const config = loadCdnConfig(env)
    expect(inspect(config, { depth: 10 })).not.toContain(TOKEN)
    expect(inspect(config, { depth: 10 })).toContain('purgeToken: <redacted>')
    expect(JSON.stringify(config)).not.toContain(TOKEN)
    expect(JSON.parse(JSON.stringify(config)).purgeToken).toBe('<redacted>')
    expect(String(config.purgeToken)).toBe('<redacted>')
    expect(`${config.purgeToken}`).toBe('<redacted>')
    expect(inspect(createPurgeApi(config), { depth: 10 })).not.toContain(TOKEN)
  })

  it('never reaches a log line, even as a bare string, once registered with the Redactor', () => {
    const redactor = new Redactor()
    const { logger, lines } = capturingLogger(redactor)
    const config = loadCdnConfig(env, { logger, redactor })
    logger.info({ cdn: config }, 'CDN configured')
    logger.info(`the token is ${config.purgeToken?.reveal()}`)
    logger.error({ err: new Error(`provider said ${TOKEN}`) }, 'purge failed')
    expect(lines).toHaveLength(3)
    for (const line of lines) expect(line).not.toContain(TOKEN)
    expect(JSON.parse(lines[0]!).cdn.purgeToken).toBe('<redacted>')
    expect(lines[1]).toContain('the token is <redacted>')
  })
})

describe('purge adapters chosen by CDN_PROVIDER', () => {
  let standIn: StandIn | undefined
  afterEach(() => standIn?.close())

  it('makes purge() a logged no-op for none', async () => {
    const { logger, lines } = capturingLogger()
    const api = createPurgeApi(loadCdnConfig({ CDN_PROVIDER: 'none' }), { logger })
    expect(api.provider).toBe('none')
    await api.purge(['index.html'])
    expect(lines.join('')).toContain('CDN purge skipped: CDN_PROVIDER is none')
  })

  it.each([
    ['digitalocean', { CDN_PURGE_ZONE: 'ep' }, '/v2/cdn/endpoints/ep/cache', 204],
    ['bunny', { CDN_URL: 'https://cdn.example.com' }, '/purge', 200],
    [
      'cloudflare',
      { CDN_URL: 'https://cdn.example.com', CDN_PURGE_ZONE: 'z' },
      '/zones/z/purge_cache',
      200,
    ],
  ])('selects %s and sends to CDN_PURGE_API_URL', async (provider, extra, path, status) => {
    standIn = await startStandIn(() => ({
      status,
      body: provider === 'cloudflare' ? '{"success":true}' : '',
    }))
    const api = createPurgeApi(
      loadCdnConfig({
        CDN_PROVIDER: provider,
        CDN_PURGE_TOKEN: TOKEN,
        CDN_PURGE_API_URL: standIn.url,
        ...extra,
      }),
    )
    expect(api.provider).toBe(provider)
    await api.purge(['index.html'])
    expect(standIn.requests.map((r) => r.path)).toEqual([path])
  })
})

describe('purge paths', () => {
  it('normalizes and validates before any request', () => {
    expect(normalizePurgePaths(['/a.html', 'a.html', 'b/*', '*'])).toEqual(['a.html', 'b/*', '*'])
    expect(
      normalizePurgePaths(['https://cdn.example.com/x.html'], 'https://cdn.example.com/'),
    ).toEqual(['x.html'])
    for (const bad of [
      [],
      [''],
      ['/'],
      ['a*b.html'],
      ['*/x'],
      ['a\nb'],
      ['https://other.example.com/x'],
    ]) {
      expect(() => normalizePurgePaths(bad, 'https://cdn.example.com')).toThrow(
        InvalidPurgePathError,
      )
    }
  })
})
