import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { CliError } from '../../src/cli/cli-error.ts'
import { runCdnPurge } from '../../src/cli/commands/cdn-purge.ts'
import { capturingLogger } from './support/logger.ts'
import { type StandIn, startStandIn } from './support/stand-in.ts'

const run = promisify(execFile)
const bin = fileURLToPath(new URL('../../bin/kiln.js', import.meta.url))
const TOKEN = 'cli-purge-token-0123456789'

describe('kilnjs cdn:purge', () => {
  let standIn: StandIn | undefined
  afterEach(() => standIn?.close())

  const env = (url: string) => ({
    CDN_PROVIDER: 'digitalocean',
    CDN_PURGE_ZONE: 'ep-1',
    CDN_PURGE_TOKEN: TOKEN,
    CDN_PURGE_API_URL: url,
  })

  it('purges the named paths', async () => {
    standIn = await startStandIn(() => ({ status: 204 }))
    const printed: string[] = []
    const { logger } = capturingLogger()
    await runCdnPurge(['index.html', 'assets/*'], {
      env: env(standIn.url),
      logger,
      print: (line) => printed.push(line),
    })
    expect(JSON.parse(standIn.requests[0]!.body)).toEqual({ files: ['index.html', 'assets/*'] })
    expect(printed.join('\n')).toContain('Purged 2 path(s) on digitalocean')
  })

  it('refuses * without --all and sends nothing', async () => {
    standIn = await startStandIn(() => ({ status: 204 }))
    await expect(runCdnPurge(['*'], { env: env(standIn.url) })).rejects.toThrow(CliError)
    await expect(runCdnPurge(['/*'], { env: env(standIn.url) })).rejects.toThrow('--all')
    await expect(runCdnPurge([], { env: env(standIn.url) })).rejects.toThrow(CliError)
    expect(standIn.requests).toHaveLength(0)
  })

  it('purges everything with --all', async () => {
    standIn = await startStandIn(() => ({ status: 204 }))
    await runCdnPurge([], { all: true, env: env(standIn.url), print: () => {} })
    expect(JSON.parse(standIn.requests[0]!.body)).toEqual({ files: ['*'] })
  })

  it('turns a failed purge into one message without the token', async () => {
    standIn = await startStandIn(() => ({
      status: 401,
      body: `{"id":"unauthorized","message":"no ${TOKEN}"}`,
    }))
    const error = (await runCdnPurge(['index.html'], {
      env: env(standIn.url),
      logger: capturingLogger().logger,
    }).catch((e: unknown) => e)) as CliError
    expect(error).toBeInstanceOf(CliError)
    expect(error.message).toContain('HTTP 401')
    expect(error.message).not.toContain(TOKEN)
  })

  it('runs from the kiln bin: refuses * with exit code 1 and one line', async () => {
    const failure = await run(process.execPath, [bin, 'cdn:purge', '*'], {
      env: { ...process.env, CDN_PURGE_TOKEN: TOKEN, CDN_PURGE_ZONE: 'ep', NO_COLOR: '1' },
    }).catch((e: unknown) => e as { code: number; stderr: string })
    expect((failure as { code: number }).code).toBe(1)
    expect((failure as { stderr: string }).stderr.trim()).toBe(
      'Purging * invalidates the whole CDN cache: run `kilnjs cdn:purge --all` to do it deliberately',
    )
  })

  it('runs from the kiln bin against the provider API', async () => {
    standIn = await startStandIn(() => ({ status: 204 }))
    const { stdout } = await run(process.execPath, [bin, 'cdn:purge', 'index.html'], {
      env: { ...process.env, ...env(standIn.url), NO_COLOR: '1' },
    })
    expect(stdout.trim()).toBe('Purged 1 path(s) on digitalocean')
    expect(standIn.requests).toHaveLength(1)
    expect(standIn.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`)
  })
})
