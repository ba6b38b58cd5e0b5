import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import type { Command } from 'commander'
import pc from 'picocolors'
import type { Env } from '../../core/config/index.ts'
import { messagingEnvStatus } from '../../messaging/index.ts'
import { CliError } from '../cli-error.ts'
import { loadKilnConfig } from '../models/load.ts'
import { messagingScaffoldFiles } from '../scaffold/messaging/templates.ts'

export interface MakeMessagingOptions {
  /** The app's root; the current folder by default. */
  cwd?: string
  /** Where to write; kiln.config.ts `messaging`, else `src/messaging`. */
  dir?: string
  /** The app's public base URL for the callback; APP_URL, else http://localhost:3000. */
  baseUrl?: string
  env?: Env
  print?: (line: string) => void
}

export interface MakeMessagingResult {
  dir: string
  created: string[]
  /** Files that already existed: never overwritten. */
  skipped: string[]
}

const CONFIG_FILES = ['kiln.config.ts', 'kiln.config.mts', 'kiln.config.js', 'kiln.config.mjs']

/** `kilnjs make:messaging`: writes the init function, webhook wiring and listener stubs. */
export async function runMakeMessaging(
  options: MakeMessagingOptions = {},
): Promise<MakeMessagingResult> {
  const cwd = resolve(options.cwd ?? process.cwd())
  const env = options.env ?? process.env
  const print = options.print ?? ((line: string) => console.log(line))
  const dir = await targetDir(cwd, options.dir)
  const baseUrl = callbackBase(options.baseUrl ?? env.APP_URL)

  await mkdir(dir, { recursive: true })
  const created: string[] = []
  const skipped: string[] = []
  for (const file of messagingScaffoldFiles()) {
    const target = join(dir, file.path)
    const shown = relative(cwd, target) || target
    try {
      // 'wx' fails when the file exists: never overwrite, even in a race.
      await writeFile(target, file.contents, { flag: 'wx' })
      created.push(target)
      print(`${pc.green('created')} ${shown}`)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      skipped.push(target)
      print(`${pc.yellow('exists ')} ${shown} ${pc.dim('(kept as is)')}`)
    }
  }
  printSetup(print, { dir: relative(cwd, dir) || '.', baseUrl, env })
  return { dir, created, skipped }
}

async function targetDir(cwd: string, option: string | undefined): Promise<string> {
  if (option !== undefined) return resolve(cwd, option)
  if (CONFIG_FILES.some((name) => existsSync(join(cwd, name)))) {
    const { config, root } = await loadKilnConfig(cwd)
    if (config.messaging) return resolve(root, config.messaging)
  }
  return resolve(cwd, 'src/messaging')
}

function callbackBase(value: string | undefined): string {
  const base = value ?? 'http://localhost:3000'
  let url: URL
  try {
    url = new URL(base)
  } catch {
    throw new CliError(`--url expects an absolute http(s) URL, got "${base}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`--url expects an absolute http(s) URL, got "${base}"`)
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '')
}

function printSetup(
  print: (line: string) => void,
  { dir, baseUrl, env }: { dir: string; baseUrl: string; env: Env },
): void {
  const { missing } = messagingEnvStatus(env)
  const verifyTokenSet = Boolean(env.MSG_VERIFY_TOKEN)
  print('')
  print(pc.bold('Provider setup (WhatsApp Cloud API, app dashboard → WhatsApp → Configuration):'))
  print(`  Callback URL:   ${baseUrl}/messaging/webhook`)
  print(
    `  Verify token:   the value of MSG_VERIFY_TOKEN${verifyTokenSet ? '' : pc.yellow(' (not set yet)')}`,
  )
  print('  Webhook fields: subscribe to messages and message_status')
  if (baseUrl.startsWith('http://')) {
    print(pc.dim('  The provider only calls https URLs: use your public URL (--url or APP_URL).'))
  }
  print('')
  print(pc.bold('Environment:'))
  if (missing.length === 0) {
    print(
      `  ${pc.green('✓')} MSG_APP_SECRET, MSG_ACCESS_TOKEN, MSG_PHONE_NUMBER_ID, MSG_VERIFY_TOKEN`,
    )
  } else {
    print(`  Missing: ${missing.join(', ')}`)
    if (!verifyTokenSet) {
      print(`  A fresh verify token: MSG_VERIFY_TOKEN=${randomBytes(24).toString('base64url')}`)
    }
  }
  print('')
  print(pc.bold('Wire it up:'))
  print(`  const messaging = initMessaging({ env, kv, queue, logger, redactor, isOwner })`)
  print(`  app.route('/', messaging.routes)            ${pc.dim(`// from ./${dir}/index.ts`)}`)
  print(`  handlers: { ...messaging.jobHandlers }      ${pc.dim('// in your worker module')}`)
}

export function register(program: Command): void {
  program
    .command('make:messaging')
    .description(
      'Scaffold messaging: init function, webhook wiring and listener stubs (never overwrites)',
    )
    .option(
      '--dir <path>',
      'where to write (default: kiln.config.ts `messaging`, else src/messaging)',
    )
    .option('--url <base_url>', "the app's public base URL (default: APP_URL)")
    .action(async (options: { dir?: string; url?: string }) => {
      await runMakeMessaging({ dir: options.dir, baseUrl: options.url })
    })
}
