import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BullMqQueue, type Redis } from '../../src/core/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { sleep } from './backends.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixture = fileURLToPath(new URL('../fixtures/queue-work', import.meta.url))

interface Run {
  child: ChildProcess
  output(): string
  exited: Promise<number | null>
}

const running: Run[] = []

/** `kilnjs queue:work …` from this checkout, as a separate process. */
function kiln(args: string[], env: Record<string, string> = {}, cwd = root): Run {
  const child = spawn(process.execPath, [`${root}bin/kiln.js`, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const run = { child, output: () => output, exited }
  running.push(run)
  return run
}

async function until(check: () => boolean | Promise<boolean>, what: string, run?: Run) {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${run?.output()}`)
    await sleep(50)
  }
}

afterEach(async () => {
  for (const run of running.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL')
    await run.exited
  }
})

// Each test starts one or two kiln processes: generous bounds for a loaded machine, not speed checks.
const SPAWNING = { timeout: 120_000 }

describe('kilnjs queue:work refuses what it cannot run', SPAWNING, () => {
  // A Redis URL that these failures never get to use.
  const unused = { REDIS_URL: 'redis://127.0.0.1:6390' }

  it('without REDIS_URL: jobs run in the web process', async () => {
    const run = kiln(['queue:work', '--config', fixture])
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain(
      'queue:work needs REDIS_URL: without it, jobs run inside the web process',
    )
    expect(run.output()).not.toContain('    at ')
  })

  it('a worker module whose queue is in memory after all', async () => {
    const run = kiln(['queue:work', '--config', fixture], { ...unused, KILN_FIXTURE_MEMORY: '1' })
    expect(await run.exited).toBe(1)
    expect(run.output().trim()).toBe(
      'queue:work needs REDIS_URL: without it, jobs run inside the web process',
    )
  })

  it('a config without a worker module', async () => {
    const run = kiln(['queue:work', '--config', `${fixture}/no-worker/kiln.config.ts`], unused)
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('kiln.config.ts has no `worker`')
  })

  it('a folder without kiln.config.ts', async () => {
    const run = kiln(['queue:work'], unused, fileURLToPath(new URL('../fixtures', import.meta.url)))
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('No kiln.config.ts in')
  })

  it('an unreachable Redis, in one line naming host and port but not the password', async () => {
    const run = kiln(['queue:work', '--config', fixture], {
      REDIS_URL: 'redis://:hunter2-secret@127.0.0.1:6390',
    })
    expect(await run.exited).toBe(1)
    const output = run.output().trim()
    expect(output).toMatch(/^Could not start the worker: Redis at 127\.0\.0\.1:6390 is unreachable/)
    expect(output.split('\n')).toHaveLength(1)
    expect(output).not.toContain('hunter2-secret')
  })

  it('a bad --concurrency', async () => {
    const run = kiln(['queue:work', '--config', fixture, '--concurrency', 'lots'], {
      REDIS_URL: 'redis://127.0.0.1:6390',
    })
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('--concurrency expects a whole number')
  })
})

describeWithRedis('kilnjs queue:work on Redis', SPAWNING, () => {
  let redis: TestRedis
  let producer: BullMqQueue
  let client: Redis
  let env: Record<string, string>

  beforeEach(async () => {
    redis = await createTestRedis()
    // The same queue the fixture's createSharedState opens: name `jobs`, the test's prefix.
    producer = new BullMqQueue({
      connections: redis.connections,
      name: 'jobs',
      prefix: redis.prefix,
    })
    client = redis.connections.connect()
    env = { REDIS_URL: redisUrl ?? '', KILN_FIXTURE_PREFIX: redis.prefix, LOG_LEVEL: 'info' }
  })
  afterEach(async () => {
    await producer.close()
    await redis.cleanup()
  })

  const reports = async (list: string) =>
    (await client.lrange(`${redis.prefix}:report:${list}`, 0, -1)).map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    )

  it('runs the jobs of the worker module and stops on SIGTERM with exit code 0', async () => {
    const run = kiln(['queue:work', '--config', `${fixture}/kiln.config.ts`], env)
    await until(() => run.output().includes('worker started'), 'the start line', run)
    expect(run.output()).toContain('"concurrency":2')
    for (let n = 1; n <= 3; n++) await producer.enqueue('record', { n }, { jobId: `record-${n}` })
    await until(async () => (await reports('done')).length === 3, 'three jobs', run)
    const done = await reports('done')
    expect(done.map((d) => d.payload)).toEqual(
      expect.arrayContaining([{ n: 1 }, { n: 2 }, { n: 3 }]),
    )
    expect(done.every((d) => d.pid === run.child.pid)).toBe(true)
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(run.output()).toContain('worker stopped')
  })

  it('takes --concurrency over the module default', async () => {
    const run = kiln(['queue:work', '--concurrency', '5'], env, fixture)
    await until(() => run.output().includes('worker started'), 'the start line', run)
    expect(run.output()).toContain('"concurrency":5')
    run.child.kill('SIGINT')
    expect(await run.exited).toBe(0)
  })

  it('on SIGTERM finishes the running job before it exits', async () => {
    const run = kiln(['queue:work', '--config', fixture], env)
    await until(() => run.output().includes('worker started'), 'the start line', run)
    await producer.enqueue('slow', { ms: 1_500 }, { jobId: 'slow-1' })
    await until(async () => (await reports('started')).length === 1, 'the job to start', run)
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(await reports('done')).toEqual([{ id: 'slow-1', pid: run.child.pid }])
    expect(run.output()).toContain('waiting for the running ones')
  })

  it('a worker killed mid-job: the job runs again on a new worker and completes', async () => {
    const first = kiln(['queue:work', '--config', fixture], env)
    await until(() => first.output().includes('worker started'), 'the first worker', first)
    await producer.enqueue('hangOnce', {}, { jobId: 'hang-1' })
    await until(async () => (await reports('started')).length === 1, 'the first run', first)
    first.child.kill('SIGKILL')
    await first.exited
    expect(await reports('done')).toEqual([])

    const second = kiln(['queue:work', '--config', fixture], env)
    await until(async () => (await reports('done')).length === 1, 'the second run', second)
    expect(await reports('done')).toEqual([{ id: 'hang-1', run: 2, pid: second.child.pid }])
    expect(await producer.failed()).toEqual([])
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  })
})
