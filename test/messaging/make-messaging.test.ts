import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify, stripVTControlCharacters } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { runMakeMessaging } from '../../src/cli/commands/make-messaging.ts'
import { repoRoot, spawnKiln } from '../support/processes.ts'

const run = promisify(execFile)
const FILES = ['index.ts', 'listeners.ts', 'webhook.ts']
const cleanups: string[] = []
afterEach(async () => {
  for (const dir of cleanups.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function tempApp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-make-messaging-'))
  cleanups.push(dir)
  return dir
}

const plain = (text: string) => stripVTControlCharacters(text)

describe('kilnjs make:messaging', () => {
  it('writes the init function, webhook wiring and listener stubs, and prints the provider setup', async () => {
    const cwd = await tempApp()
    const lines: string[] = []
    const env = {
      MSG_VERIFY_TOKEN: 'verify-token-never-printed',
      MSG_APP_SECRET: 'app-secret-never-printed',
    }
    const result = await runMakeMessaging({
      cwd,
      env,
      baseUrl: 'https://shop.example.com/',
      print: (line) => lines.push(plain(line)),
    })
    expect(result.dir).toBe(join(cwd, 'src/messaging'))
    expect(result.created.map((f) => f.slice(result.dir.length + 1)).sort()).toEqual(FILES)
    expect(result.skipped).toEqual([])
    const out = lines.join('\n')
    expect(out).toContain('Callback URL:   https://shop.example.com/messaging/webhook')
    expect(out).toContain('Verify token:   the value of MSG_VERIFY_TOKEN')
    expect(out).toContain('subscribe to messages and message_status')
    expect(out).toContain('Missing: MSG_ACCESS_TOKEN, MSG_PHONE_NUMBER_ID')
    expect(out).not.toContain(env.MSG_VERIFY_TOKEN)
    expect(out).not.toContain(env.MSG_APP_SECRET)
  })

  it('suggests a fresh verify token only when none is set', async () => {
    const lines: string[] = []
    await runMakeMessaging({ cwd: await tempApp(), env: {}, print: (l) => lines.push(plain(l)) })
    expect(lines.join('\n')).toMatch(/A fresh verify token: MSG_VERIFY_TOKEN=[A-Za-z0-9_-]{32}/)
    expect(lines.join('\n')).toContain('Callback URL:   http://localhost:3000/messaging/webhook')
  })

  it('never overwrites: an existing file is kept byte for byte, the missing ones are created', async () => {
    const cwd = await tempApp()
    await mkdir(join(cwd, 'src/messaging'), { recursive: true })
    const mine = 'export const edited = true\n'
    await writeFile(join(cwd, 'src/messaging/listeners.ts'), mine)
    const lines: string[] = []
    const result = await runMakeMessaging({ cwd, env: {}, print: (l) => lines.push(plain(l)) })
    expect(result.skipped).toEqual([join(cwd, 'src/messaging/listeners.ts')])
    expect(result.created).toHaveLength(2)
    expect(await readFile(join(cwd, 'src/messaging/listeners.ts'), 'utf8')).toBe(mine)
    expect(lines.join('\n')).toContain('exists  src/messaging/listeners.ts (kept as is)')
    const again = await runMakeMessaging({ cwd, env: {}, print: () => {} })
    expect(again.created).toEqual([])
    expect(again.skipped).toHaveLength(3)
  })

  it("writes where kiln.config.ts's `messaging` says", async () => {
    const cwd = await tempApp()
    await writeFile(join(cwd, 'package.json'), '{"type":"module"}\n')
    await writeFile(
      join(cwd, 'kiln.config.ts'),
      "export default { dialect: 'postgres', schema: './schema.ts', out: './api', messaging: './app/chat' }\n",
    )
    const result = await runMakeMessaging({ cwd, env: {}, print: () => {} })
    expect(result.dir).toBe(join(cwd, 'app/chat'))
    for (const file of FILES) expect(existsSync(join(cwd, 'app/chat', file))).toBe(true)
  })

  it('the listener file declares one `class X implements Listener<Event>` per event type', async () => {
    const cwd = await tempApp()
    await runMakeMessaging({ cwd, env: {}, print: () => {} })
    const source = await readFile(join(cwd, 'src/messaging/listeners.ts'), 'utf8')
    const found = [...source.matchAll(/class\s+(\w+)\s+implements\s+Listener<(\w+)>/g)].map((m) => [
      m[1],
      m[2],
    ])
    expect(found).toEqual([
      ['TextReceivedListener', 'MessagingTextReceived'],
      ['StatusUpdateListener', 'MessagingStatusUpdate'],
    ])
  })

  it('rejects a base URL that is not http(s)', async () => {
    await expect(
      runMakeMessaging({ cwd: await tempApp(), env: {}, baseUrl: 'ftp://x', print: () => {} }),
    ).rejects.toThrow('--url expects an absolute http(s) URL')
  })

  it('runs as `kilnjs make:messaging`, and the generated code typechecks against kiln', async () => {
    const dir = join(repoRoot, 'test/messaging', `scaffold-${randomBytes(4).toString('hex')}`)
    cleanups.push(dir)
    const cli = spawnKiln([
      'make:messaging',
      '--dir',
      join(dir, 'messaging'),
      '--url',
      'https://a.example',
    ])
    expect(await cli.exited).toBe(0)
    expect(plain(cli.output())).toContain('Callback URL:   https://a.example/messaging/webhook')
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../../tsconfig.json', include: ['./**/*.ts'] }),
    )
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [
      tsc,
      '--noEmit',
      '-p',
      join(dir, 'tsconfig.json'),
    ]).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }))
    expect(result.stdout).toBe('')
  }, 120_000)
})
