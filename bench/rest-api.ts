/**
 * The generated REST API against the floor, out of process: the demo's generated API
 * (bench/servers/rest-kiln.ts: API key + `api` limiter, limit raised) with the limiter in memory
 * and in Redis, beside node:http + pg (bench/servers/rest-floor.ts), each in its own child
 * process, loaded by wrk in interleaved rounds, on 100,000 posts (`KILN_BENCH_ROWS`).
 *
 * Then the show route taken apart (bench/servers/rest-layers.ts): Hono alone, the generated
 * controller alone, with `apiKeyAuth`, with `throttle`, with `privateCache`, with the five
 * middlewares of the group, with `apiGuard` (the same in one), and the whole group, beside the
 * floor, to say what each layer costs.
 *
 * `KILN_BENCH_BEFORE=<git ref>` adds the demo API as it was at that commit (checked out into a
 * temporary directory, run with this checkout's node_modules) to the show rounds: before and
 * after in one run.
 *
 * `npm run bench -- rest-api` (`--quick`: one short round). Needs wrk, PostgreSQL and Redis.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  formatRatios,
  type HttpRequest,
  type HttpTarget,
  type Ratio,
  ratio,
  roundsFromEnv,
  runRounds,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20

export interface RestServers {
  floor: { pid: number; origin: string }
  kiln: { pid: number; origin: string }
  kilnRedis: { pid: number; origin: string }
  stop(): Promise<void>
}

/** Starts the floor and the demo API (memory and Redis limiter) on `url`. */
export async function startRestServers(url: string): Promise<RestServers> {
  const env = { DATABASE_URL: url }
  const servers = await Promise.all([
    startServer<{ port: number }>(new URL('./servers/rest-floor.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), {
      env: { ...env, KILN_BENCH_LIMITER: 'redis' },
    }),
  ])
  const [floor, kiln, kilnRedis] = servers.map((s) => ({
    pid: s.pid,
    origin: `http://127.0.0.1:${s.info.port}`,
  })) as [RestServers['floor'], RestServers['kiln'], RestServers['kilnRedis']]
  return {
    floor,
    kiln,
    kilnRedis,
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()))
    },
  }
}

/** `count` paths with random ids in 1..rows, the same sequence for every side. */
export function randomIds(rows: number, count = 20_000): number[] {
  let seed = 42
  return Array.from({ length: count }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return 1 + (seed % rows)
  })
}

/** A copy of the repository at `ref` with this checkout's bench/ and node_modules. */
export function checkoutBefore(ref: string): { dir: string; remove(): void } {
  const repo = fileURLToPath(new URL('..', import.meta.url))
  const dir = mkdtempSync(join(tmpdir(), 'kiln-before-'))
  const archive = execFileSync(
    'git',
    ['-C', repo, 'archive', ref, 'src', 'examples', 'tsconfig.json', 'package.json'],
    { maxBuffer: 512 * 2 ** 20 },
  )
  execFileSync('tar', ['-x', '-C', dir], { input: archive })
  cpSync(join(repo, 'bench'), join(dir, 'bench'), { recursive: true })
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'))
  const missing = missingDependencies(dir)
  if (missing.length > 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(
      `KILN_BENCH_BEFORE=${ref} depends on packages this checkout no longer installs; ` +
        `add them for the run with: npm install --no-save ${missing.join(' ')}`,
    )
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The earlier commit's dependencies absent from the shared node_modules, as `name@range`. */
function missingDependencies(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
  }
  return Object.entries(manifest.dependencies ?? {})
    .filter(([name]) => !existsSync(join(dir, 'node_modules', name, 'package.json')))
    .map(([name, range]) => `'${name}@${range}'`)
}

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = Number(process.env.KILN_BENCH_ROWS ?? 100_000)
  const options = roundsFromEnv(quick)
  const database = await createDemoDatabase(rows)
  const servers = await startRestServers(database.url).catch(async (error) => {
    await database.drop()
    throw error
  })
  const auth = { authorization: `Bearer ${database.apiKey}` }
  const target = (
    label: string,
    side: { pid: number; origin: string },
    requests: HttpRequest[],
  ): HttpTarget => ({ label, ...side, requests })
  const ids = randomIds(rows)
  const kilnShow = ids.map((id) => ({ path: `/api/v1/posts/${id}`, headers: auth }))
  const floorShow = ids.map((id) => ({ path: `/posts/${id}` }))
  const deep = Math.min(4000, Math.floor(rows / PER_PAGE))
  const out: string[] = []
  const beforeRef = process.env.KILN_BENCH_BEFORE
  const before = beforeRef ? checkoutBefore(beforeRef) : undefined
  const stops: Array<() => Promise<void>> = []
  try {
    const showTargets = [
      target('kiln show (memory limiter)', servers.kiln, kilnShow),
      target('kiln show (Redis limiter)', servers.kilnRedis, kilnShow),
      target('floor show', servers.floor, floorShow),
    ]
    const beforeLabel = `kiln show (memory limiter) at ${beforeRef}`
    if (before) {
      const server = await startServer<{ port: number }>(
        join(before.dir, 'bench/servers/rest-kiln.ts'),
        // From its own directory, so its `kilnjs/*` imports are that commit's code too.
        { env: { DATABASE_URL: database.url }, cwd: before.dir },
      )
      stops.push(server.stop)
      showTargets.push(
        target(
          beforeLabel,
          { pid: server.pid, origin: `http://127.0.0.1:${server.info.port}` },
          kilnShow,
        ),
      )
    }
    const show = await runRounds(showTargets, options)
    const layersServer = await startServer<Record<string, number>>(
      new URL('./servers/rest-layers.ts', import.meta.url),
      { env: { DATABASE_URL: database.url } },
    )
    stops.push(layersServer.stop)
    const layer = (name: string) =>
      target(
        `show: ${name}`,
        { pid: layersServer.pid, origin: `http://127.0.0.1:${layersServer.info[name]}` },
        kilnShow,
      )
    const layers = await runRounds(
      [
        target('floor show', servers.floor, floorShow),
        layer('hono'),
        layer('controller'),
        layer('auth'),
        layer('throttle'),
        layer('cache'),
        layer('stages'),
        layer('guard'),
        layer('full'),
      ],
      options,
    )
    const list = await runRounds(
      [
        target('kiln page 1 (exact total)', servers.kiln, [
          { path: `/api/v1/posts?page=1&per_page=${PER_PAGE}`, headers: auth },
        ]),
        target('floor page 1, no count', servers.floor, [{ path: '/posts?page=1' }]),
        target(`kiln page ${deep}`, servers.kiln, [
          { path: `/api/v1/posts?page=${deep}&per_page=${PER_PAGE}`, headers: auth },
        ]),
        target(`floor page ${deep}`, servers.floor, [{ path: `/posts?page=${deep}` }]),
      ],
      options,
    )
    out.push(
      formatSection(`${rows.toLocaleString('en-US')} posts`, [
        ratio(show, 'kiln show (memory limiter)', 'floor show'),
        ratio(show, 'kiln show (Redis limiter)', 'floor show'),
        ...(before
          ? [
              ratio(show, beforeLabel, 'floor show'),
              ratio(show, 'kiln show (memory limiter)', beforeLabel),
            ]
          : []),
        ratio(list, 'kiln page 1 (exact total)', 'floor page 1, no count'),
        ratio(list, `kiln page ${deep}`, `floor page ${deep}`),
      ]),
      formatSection(
        'The show route taken apart (Hono alone; the generated controller; + apiKeyAuth; + throttle; + privateCache; + privateCache, the two-stage limiter, key and body limit; + apiGuard, the same in one middleware; the whole group)',
        ['hono', 'controller', 'auth', 'throttle', 'cache', 'stages', 'guard', 'full'].map((name) =>
          ratio(layers, `show: ${name}`, 'floor show'),
        ),
      ),
    )
  } finally {
    await Promise.all(stops.map((stop) => stop()))
    before?.remove()
    await servers.stop()
    await database.drop()
  }
  return out.join('\n\n')
}

function formatSection(title: string, ratios: Ratio[]): string {
  return `### ${title}\n\n${formatRatios(ratios)}`
}
