/**
 * `crud_list` over `/mcp` (both protocol eras) against the REST list of the same page, driven
 * by `wrk` in another process (`apt-get install wrk`), in alternating rounds of one run.
 *
 *   npx tsx bench/mcp-wrk.ts [--rounds 3] [--seconds 5] [--connections 16]
 *
 * The server is the demo's REST API and kiln's `/mcp` endpoint with the data tools, on
 * PostgreSQL (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else the local server; a
 * scratch database is created and dropped), 10,000 posts, page 1 of 20. The server runs in
 * this process, with the Node flags of every benchmark server (`serverNodeFlags`).
 */
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import { serverNodeFlags } from './http/index.ts'
import { startMcpListServer } from './servers/mcp-list.ts'

const PER_PAGE = 20
const run = promisify(execFile)

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
})

interface Target {
  name: string
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** Text the answer must contain (a wrong answer must not be measured as a fast one). */
  expect: string
}

/** `bench_noop`: the endpoint's, auth's and the SDK's cost of a call, without its work. */
const NOOP = { name: 'bench_noop', arguments: {} }

const mcpHeaders = (token: string) => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
})

/** A 2025-era `tools/call`: no envelope, the version in its header. */
function legacyCall(name: string, call: object, expect: string, token: string): Target {
  return {
    name,
    method: 'POST',
    path: '/mcp',
    headers: { ...mcpHeaders(token), 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
    expect,
  }
}

/** A 2026-07-28 `tools/call`: the per-request `_meta` envelope and the standard headers. */
function modernCall(
  name: string,
  call: { name: string; arguments: object },
  expect: string,
  token: string,
): Target {
  return {
    name,
    method: 'POST',
    path: '/mcp',
    headers: {
      ...mcpHeaders(token),
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': call.name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...call,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'wrk', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
    expect,
  }
}

async function main(): Promise<void> {
  const { origin, restKey: rawKey, token, close } = await startMcpListServer({ poolMax: 10 })
  const scripts = mkdtempSync(join(tmpdir(), 'kiln-wrk-'))
  try {
    const call = { name: 'crud_list', arguments: { model: 'posts', page: 1, per_page: PER_PAGE } }
    const targets: Target[] = [
      {
        name: 'REST GET /exact/api/v1/posts (count per request)',
        method: 'GET',
        path: `/exact/api/v1/posts?page=1&per_page=${PER_PAGE}`,
        headers: { Authorization: `Bearer ${rawKey}` },
        expect: 'Post ',
      },
      legacyCall('MCP crud_list, 2025-era request', call, 'Post ', token),
      modernCall('MCP crud_list, 2026-07-28 request', call, 'Post ', token),
      legacyCall('MCP bench_noop, 2025-era request', NOOP, 'noop', token),
      modernCall('MCP bench_noop, 2026-07-28 request', NOOP, 'noop', token),
    ]
    for (const target of targets) await check(origin, target)
    // Requests per second of wall time, and per second of this process's CPU time: on a
    // machine shared with other work the second is the steadier measure of what a call costs.
    const rates = new Map<string, number[]>(targets.map((t) => [t.name, []]))
    const perCpu = new Map<string, number[]>(targets.map((t) => [t.name, []]))
    const loads: number[] = []
    for (let round = 0; round < Number(flags.rounds); round++) {
      loads.push(loadavg()[0]!)
      for (const target of targets) {
        const cpu = process.cpuUsage()
        const { rate, requests } = await wrk(origin, target, scripts)
        const used = process.cpuUsage(cpu)
        rates.get(target.name)!.push(rate)
        perCpu.get(target.name)!.push(requests / ((used.user + used.system) / 1e6))
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
    const rest = median(rates.get(targets[0]!.name)!)
    const restCpu = median(perCpu.get(targets[0]!.name)!)
    loads.push(loadavg()[0]!)
    console.log(
      `\n${flags.rounds} rounds × ${flags.seconds} s, ${flags.connections} connections (medians); ` +
        `1-minute load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    )
    console.log(
      `${'target'.padEnd(52)} ${'req/s'.padStart(7)} ratio ${'req/cpu-s'.padStart(9)} ratio`,
    )
    for (const target of targets) {
      const value = median(rates.get(target.name)!)
      const cpu = median(perCpu.get(target.name)!)
      console.log(
        `${target.name.padEnd(52)} ${value.toFixed(0).padStart(7)} ${(value / rest).toFixed(2)}× ${cpu.toFixed(0).padStart(9)} ${(cpu / restCpu).toFixed(2)}×`,
      )
    }
  } finally {
    rmSync(scripts, { recursive: true, force: true })
    await close()
  }
}

/** One request first: a wrong answer must not be measured as a fast one. */
async function check(origin: string, target: Target): Promise<void> {
  const response = await fetch(`${origin}${target.path}`, {
    method: target.method,
    headers: target.headers,
    ...(target.body ? { body: target.body } : {}),
  })
  const text = await response.text()
  if (response.status !== 200 || /"isError":true/.test(text) || !text.includes(target.expect)) {
    throw new Error(`${target.name}: ${response.status} ${text.slice(0, 300)}`)
  }
}

async function wrk(
  origin: string,
  target: Target,
  dir: string,
): Promise<{ rate: number; requests: number }> {
  const script = join(dir, `${randomBytes(4).toString('hex')}.lua`)
  const lua = [
    `wrk.method = ${JSON.stringify(target.method)}`,
    ...Object.entries(target.headers).map(
      ([key, value]) => `wrk.headers[${JSON.stringify(key)}] = ${JSON.stringify(value)}`,
    ),
    ...(target.body ? [`wrk.body = ${JSON.stringify(target.body)}`] : []),
  ]
  writeFileSync(script, `${lua.join('\n')}\n`)
  const { stdout } = await run('wrk', [
    '-t1',
    `-c${flags.connections}`,
    `-d${flags.seconds}s`,
    '-s',
    script,
    `${origin}${target.path}`,
  ])
  if (/Non-2xx or 3xx responses/.test(stdout)) throw new Error(`${target.name}: errors\n${stdout}`)
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout)
  const requests = /(\d+) requests in/.exec(stdout)
  if (!rate || !requests) throw new Error(`wrk: no rate in\n${stdout}`)
  return { rate: Number(rate[1]), requests: Number(requests[1]) }
}

const missingFlags = serverNodeFlags().filter((flag) => !process.execArgv.includes(flag))
if (missingFlags.length > 0) {
  // The server runs in this process: run it again with the flags every benchmark server gets.
  const again = spawn(
    process.execPath,
    [
      ...process.execArgv,
      ...missingFlags,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  )
  again.on('exit', (code) => process.exit(code ?? 1))
} else {
  await main()
}
