import { existsSync, statSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import type { Command } from 'commander'
import { z } from 'zod'
import { parseEnv } from '../../core/config/index.ts'
import { isKilnError } from '../../core/errors.ts'
import { firstLineOf } from '../../core/first-line.ts'
import { createLogger, type Logger } from '../../core/logger.ts'
import type { WorkerDefinition } from '../../core/queue/worker-definition.ts'
import { CliError } from '../cli-error.ts'
import { importAppModule, loadKilnConfig } from '../models/load.ts'

export interface QueueWorkOptions {
  /** `kiln.config.ts`, or the folder holding it; the current folder by default. */
  config?: string
  /** Jobs run at once; the worker module's `concurrency`, else 1, by default. */
  concurrency?: number
  logger?: Logger
}

export interface RunningWorker {
  definition: WorkerDefinition
  concurrency: number
  /** Stops taking jobs, waits for the running ones, closes the worker module. */
  stop(): Promise<void>
}

const NOT_ON_REDIS = 'queue:work needs REDIS_URL: without it, jobs run inside the web process'

/**
 * Loads kiln.config.ts, builds the app's worker from its `worker` module and starts working
 * the queue. Every user-fixable problem is a CliError naming what to change.
 */
export async function startQueueWorker(options: QueueWorkOptions = {}): Promise<RunningWorker> {
  const logger = options.logger ?? createLogger({ level: logLevel(), name: 'kiln-worker' })
  // Refuse before the app's module opens its database just to find an in-process queue.
  if (!process.env.REDIS_URL) throw new CliError(NOT_ON_REDIS)
  const definition = await loadWorkerDefinition(options.config)
  const concurrency = options.concurrency ?? definition.concurrency ?? 1
  // The module decides its queue: whatever it read, only a Redis queue can be worked from here.
  if (definition.queue.kind !== 'bullmq') {
    await definition.close()
    throw new CliError(NOT_ON_REDIS)
  }
  const worker = definition.queue.work(definition.handlers, { concurrency })
  logger.info(
    { concurrency, jobs: Object.keys(definition.handlers).sort() },
    'worker started: waiting for jobs',
  )
  let stopping: Promise<void> | undefined
  return {
    definition,
    concurrency,
    stop() {
      stopping ??= (async () => {
        logger.info('worker stopping: no new jobs, waiting for the running ones')
        await worker.close()
        await definition.close()
        logger.info('worker stopped')
      })()
      return stopping
    },
  }
}

async function loadWorkerDefinition(configOption: string | undefined): Promise<WorkerDefinition> {
  const { config, root, path } = await loadKilnConfig(configRoot(configOption))
  if (!config.worker) {
    throw new CliError(
      `${basename(path)} has no \`worker\`: set it to a module whose default export returns { queue, handlers, close } (see docs/core.md)`,
    )
  }
  const file = resolve(root, config.worker)
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new CliError(`Worker module not found: ${file} (\`worker\` in ${basename(path)})`)
  }
  let module: Record<string, unknown>
  try {
    module = await importAppModule(file)
  } catch (error) {
    throw new CliError(`Could not load the worker module ${file}: ${firstLineOf(error)}`, {
      cause: error,
    })
  }
  const create = module.default
  if (typeof create !== 'function') {
    throw new CliError(
      `The worker module ${file} has no default export function returning { queue, handlers, close }`,
    )
  }
  let definition: unknown
  try {
    definition = await create()
  } catch (error) {
    // The module may have its own copy of kiln's classes: a ConfigError is recognised by the
    // brand and code, whichever copy threw it.
    const message =
      isKilnError(error) && error.code === 'config_invalid' ? error.message : firstLineOf(error)
    throw new CliError(`Could not start the worker: ${message}`, { cause: error })
  }
  if (!isWorkerDefinition(definition)) {
    throw new CliError(
      `The worker module ${file} must resolve to { queue, handlers, close } (a WorkerDefinition)`,
    )
  }
  return definition
}

function isWorkerDefinition(value: unknown): value is WorkerDefinition {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as Partial<WorkerDefinition>
  return (
    typeof candidate.queue?.work === 'function' &&
    typeof candidate.handlers === 'object' &&
    candidate.handlers !== null &&
    typeof candidate.close === 'function'
  )
}

/** `--config` names the file or its folder; loadKilnConfig looks for the file in a folder. */
function configRoot(option: string | undefined): string {
  if (option === undefined) return process.cwd()
  const target = resolve(option)
  if (existsSync(target) && statSync(target).isDirectory()) return target
  if (!existsSync(target)) throw new CliError(`Config not found: ${target}`)
  if (!/^kiln\.config\.(ts|mts|js|mjs)$/.test(basename(target))) {
    throw new CliError(`--config must name a kiln.config.ts file or the folder holding it`)
  }
  return dirname(target)
}

function logLevel(): string {
  const env = parseEnv(
    z.object({
      LOG_LEVEL: z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
          message: 'expected one of fatal, error, warn, info, debug, trace, silent',
        })
        .default('info'),
    }),
    process.env,
  )
  return env.LOG_LEVEL
}

function parseConcurrency(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new CliError('--concurrency expects a whole number ≥ 1')
  return n
}

export function register(program: Command): void {
  program
    .command('queue:work')
    .description(
      "Run the app's background jobs from the Redis queue (kiln.config.ts `worker`; needs REDIS_URL)",
    )
    .option(
      '--config <path>',
      'kiln.config.ts, or the folder holding it (default: the current one)',
    )
    .option('--concurrency <n>', "jobs run at once (default: the worker module's, else 1)")
    .action(async (options: { config?: string; concurrency?: string }) => {
      const logger = createLogger({ level: logLevel(), name: 'kiln-worker' })
      const running = await startQueueWorker({
        config: options.config,
        concurrency:
          options.concurrency === undefined ? undefined : parseConcurrency(options.concurrency),
        logger,
      })
      await untilSignal(logger)
      await running.stop()
      await new Promise<void>((done) => logger.flush(() => done()))
      process.exit(0)
    })
}

/** Resolves on the first SIGTERM or SIGINT; a second one exits at once with code 1. */
function untilSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    let received = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        logger.warn({ signal }, 'second signal: exiting without waiting for running jobs')
        logger.flush(() => process.exit(1))
        return
      }
      received = true
      logger.info({ signal }, 'signal received')
      resolve()
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}
