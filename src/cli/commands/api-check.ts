import type { Command } from 'commander'
import pc from 'picocolors'
import { importOptional } from '../../core/optional-package.ts'

export interface ApiCheckOptions {
  apiKey: string
  /** The app's base URL; `APP_URL`, else http://localhost:3000. */
  url?: string
  /** Where the OpenAPI document is served (default `/api/openapi.json`). */
  specPath?: string
  env?: Record<string, string | undefined>
  print?: (line: string) => void
  /** Per-request time limit in milliseconds (default 10 s). */
  timeoutMs?: number
}

export interface ApiCheckResult {
  ok: boolean
  /** The MCP registration command, on success. */
  mcpCommand?: string
}

interface OpenApiLike {
  openapi?: unknown
  info?: { title?: unknown }
  paths?: Record<string, Record<string, unknown>>
}

/**
 * `kilnjs api:check`: (1) the server answers, (2) the spec path answers, (3) with a valid
 * OpenAPI 3.x document, (4) the API key authenticates. One ✓/✗ line per check; stops at the
 * first failure. On success prints the command registering the API with an MCP client.
 */
export async function runApiCheck(options: ApiCheckOptions): Promise<ApiCheckResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  // Loaded before anything is checked: without it the command says what to install, once.
  const { default: SwaggerParser } = await importOptional(
    '@apidevtools/swagger-parser',
    'kilnjs api:check',
    () => import('@apidevtools/swagger-parser'),
  )
  const env = options.env ?? process.env
  const base = (options.url ?? env.APP_URL ?? 'http://localhost:3000').replace(/\/+$/, '')
  const specPath = options.specPath ?? '/api/openapi.json'
  const timeoutMs = options.timeoutMs ?? 10_000
  const pass = (text: string) => print(`${pc.green('✓')} ${text}`)
  const fail = (text: string): ApiCheckResult => {
    print(`${pc.red('✗')} ${text}`)
    return { ok: false }
  }
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(new URL(path, `${base}/`), {
      headers: { accept: 'application/json', ...headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    })

  let document: OpenApiLike
  try {
    await checkServer(get, base)
    pass(`Server reachable at ${base}`)
    document = await fetchSpec(get, specPath)
    pass(`Spec found at ${specPath}`)
    pass(await checkSpec(document, SwaggerParser))
    pass(await checkKey(get, document, specPath, options.apiKey))
  } catch (error) {
    if (error instanceof CheckFailed) return fail(error.message)
    throw error
  }

  const name = slug(typeof document.info?.title === 'string' ? document.info.title : '') || 'api'
  const mcpCommand = `claude mcp add ${name} -- npx kilnjs mcp --api-url ${base} --api-key ${options.apiKey}`
  print('')
  print('Register this API with an MCP client (Claude Code):')
  print(`  ${mcpCommand}`)
  return { ok: true, mcpCommand }
}

type SwaggerParserApi = typeof import('@apidevtools/swagger-parser')
type Get = (path: string, headers?: Record<string, string>) => Promise<Response>

/** A check that did not pass: its message is the ✗ line. */
class CheckFailed extends Error {}

/** 1. Connectivity: any HTTP answer will do. */
async function checkServer(get: Get, base: string): Promise<void> {
  let baseUrl: URL
  try {
    baseUrl = new URL(base)
    if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new TypeError()
  } catch {
    throw new CheckFailed(`Server: ${base} is not an http(s) URL`)
  }
  try {
    const response = await get(baseUrl.pathname)
    await response.body?.cancel()
  } catch (error) {
    throw new CheckFailed(`Server at ${base} is not reachable: ${networkReason(error)}`)
  }
}

/** 2. The spec path answers with JSON. */
async function fetchSpec(get: Get, specPath: string): Promise<OpenApiLike> {
  let response: Response
  let text: string
  try {
    response = await get(specPath)
    text = await response.text()
  } catch (error) {
    throw new CheckFailed(`Spec path ${specPath}: ${networkReason(error)}`)
  }
  if (response.status !== 200) {
    throw new CheckFailed(
      `Spec path ${specPath} answered ${response.status}; expected 200 (see --spec-path)`,
    )
  }
  try {
    return JSON.parse(text) as OpenApiLike
  } catch {
    throw new CheckFailed(`Spec path ${specPath} did not answer JSON`)
  }
}

/** 3. A valid OpenAPI 3.x document. */
async function checkSpec(document: OpenApiLike, SwaggerParser: SwaggerParserApi): Promise<string> {
  const problem = await validateOpenApi(document, SwaggerParser)
  if (problem) throw new CheckFailed(`Invalid OpenAPI document: ${problem}`)
  const operations = Object.values(document.paths ?? {}).reduce(
    (n, item) => n + Object.keys(item).filter((k) => HTTP_METHODS.has(k)).length,
    0,
  )
  return `Valid OpenAPI ${String(document.openapi)} document (${operations} operations)`
}

/** 4. The key authenticates on a GET operation without path parameters. */
async function checkKey(
  get: Get,
  document: OpenApiLike,
  specPath: string,
  apiKey: string,
): Promise<string> {
  const target = Object.entries(document.paths ?? {}).find(
    ([path, item]) => !path.includes('{') && 'get' in item && path !== specPath,
  )?.[0]
  if (!target) {
    throw new CheckFailed('API key: the document has no GET operation without parameters to try')
  }
  let status: number
  try {
    const response = await get(target, { authorization: `Bearer ${apiKey}` })
    await response.body?.cancel()
    status = response.status
  } catch (error) {
    throw new CheckFailed(`API key: GET ${target} failed: ${networkReason(error)}`)
  }
  if (status === 401 || status === 403) {
    throw new CheckFailed(`API key rejected: GET ${target} answered ${status}`)
  }
  if (status < 200 || status >= 300)
    throw new CheckFailed(`API key: GET ${target} answered ${status}`)
  return `API key accepted (GET ${target} answered ${status})`
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** The first validation error of a document, or undefined when it is valid OpenAPI 3.x. */
async function validateOpenApi(
  document: OpenApiLike,
  SwaggerParser: SwaggerParserApi,
): Promise<string | undefined> {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return 'not a JSON object'
  }
  if (typeof document.openapi !== 'string' || !/^3\.\d+\.\d+/.test(document.openapi)) {
    return `expected "openapi": "3.x.y", found ${JSON.stringify(document.openapi ?? null)}`
  }
  try {
    await SwaggerParser.validate(structuredClone(document) as never)
    return undefined
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // swagger-parser heads its list of errors with a summary ("Swagger schema validation
    // failed."); the first real error is the line after it.
    const lines = message
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
    return lines.find((line) => !/validation failed\.?$/i.test(line)) ?? lines[0] ?? message
  }
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  if (cause?.code === 'ECONNREFUSED') return 'connection refused'
  if (cause?.code === 'ENOTFOUND') return 'host not found'
  if ((error as Error).name === 'TimeoutError') return 'timed out'
  return cause?.message ?? (error as Error).message ?? String(error)
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

export function register(program: Command): void {
  program
    .command('api:check')
    .description('Check that a running API answers, documents itself and accepts an API key')
    .requiredOption('--api-key <key>', 'an API key of the app')
    .option('--url <url>', 'the base URL of the app (default: APP_URL, else http://localhost:3000)')
    .option('--spec-path <path>', 'path of the OpenAPI document', '/api/openapi.json')
    .action(async (flags: { apiKey: string; url?: string; specPath: string }) => {
      const { ok } = await runApiCheck(flags)
      if (!ok) process.exitCode = 1
    })
}
