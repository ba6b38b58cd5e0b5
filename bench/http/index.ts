/**
 * kiln's HTTP benchmark runner: servers in child processes, load from wrk in its own process,
 * targets in interleaved rounds, ratios per round with their median, p50/p99 and the server's
 * CPU time per request. See docs/performance.md for how the recorded figures were made.
 *
 * Typical use, from a benchmark module:
 *
 *   const floor = await startServer<{ port: number }>(new URL('./servers/floor.ts', import.meta.url))
 *   const kiln = await startServer<{ port: number }>(new URL('./servers/kiln.ts', import.meta.url))
 *   const r = await compareHttp(
 *     { label: 'kiln', origin: `http://127.0.0.1:${kiln.info.port}`, pid: kiln.pid, requests: [{ path: '/x' }] },
 *     { label: 'floor', origin: `http://127.0.0.1:${floor.info.port}`, pid: floor.pid, requests: [{ path: '/x' }] },
 *   )
 *   console.log(formatRatios([r]))
 */
export {
  type Burst,
  compareHttp,
  formatPaced,
  formatRatios,
  type HttpTarget,
  median,
  type PacedRatio,
  type PacedRounds,
  type Ratio,
  type RoundsOptions,
  type RoundsResult,
  ratio,
  roundsFromEnv,
  runRounds,
} from './compare.ts'
export {
  listen,
  processCpuUs,
  processRssMiB,
  type ServerProcess,
  type StartServerOptions,
  serveFetch,
  serverNodeFlags,
  serverReady,
  startServer,
  writeJson,
} from './server.ts'
export { assertWrk, type HttpRequest, type LoadOptions, type LoadResult, runWrk } from './wrk.ts'
