import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import type { Command } from 'commander'
import { generateApiClient } from '../../api/client/generate.ts'
import { CliError } from '../cli-error.ts'

export interface MakeClientOptions {
  /** The running app's base URL (`APP_URL`, else http://localhost:3000); unused with `file`. */
  url?: string
  /** Where the app serves its OpenAPI 3.0 document (default `/api/openapi.json`). */
  specPath?: string
  /** Read the OpenAPI 3.0 document from this JSON file instead of the running app. */
  file?: string
  /** The TypeScript file to write (default `src/api-client.ts`). */
  out?: string
  cwd?: string
  env?: Record<string, string | undefined>
  print?: (line: string) => void
  /** Per-request time limit in milliseconds (default 10 s). */
  timeoutMs?: number
}

/**
 * `kilnjs make:client`: reads the API's OpenAPI 3.0 document (from the running app, or a file)
 * and writes the typed client (`generateApiClient`): one TypeScript file, no dependency.
 */
export async function runMakeClient(options: MakeClientOptions = {}): Promise<{ path: string }> {
  const cwd = options.cwd ?? process.cwd()
  const print = options.print ?? ((line: string) => console.log(line))
  const document = options.file
    ? readDocumentFile(resolve(cwd, options.file))
    : await fetchDocument(options)
  let source: string
  try {
    source = generateApiClient(document)
  } catch (error) {
    throw new CliError((error as Error).message, { cause: error })
  }
  const path = resolve(cwd, options.out ?? 'src/api-client.ts')
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, source)
  print(`Wrote the typed client to ${relative(cwd, path) || path}`)
  return { path }
}

function readDocumentFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new CliError(`Could not read the OpenAPI document ${file}: ${(error as Error).message}`)
  }
}

async function fetchDocument(options: MakeClientOptions): Promise<unknown> {
  const env = options.env ?? process.env
  const base = (options.url ?? env.APP_URL ?? 'http://localhost:3000').replace(/\/+$/, '')
  const url = new URL(options.specPath ?? '/api/openapi.json', `${base}/`)
  let response: Response
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    })
  } catch (error) {
    throw new CliError(`Could not reach ${url.href}: ${(error as Error).message}`)
  }
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new CliError(`${url.href} answered ${response.status}; expected the OpenAPI document`)
  }
  try {
    return await response.json()
  } catch {
    throw new CliError(`${url.href} did not answer JSON`)
  }
}

export function register(program: Command): void {
  program
    .command('make:client')
    .description('Write the typed TypeScript client of the API, from its OpenAPI document')
    .option(
      '--url <url>',
      'the base URL of the running app (default: APP_URL, else http://localhost:3000)',
    )
    .option('--spec-path <path>', 'path of the OpenAPI 3.0 document', '/api/openapi.json')
    .option('--file <file>', 'read the OpenAPI 3.0 document from a JSON file instead')
    .option('--out <file>', 'the file to write', 'src/api-client.ts')
    .action(async (flags: { url?: string; specPath: string; file?: string; out: string }) => {
      await runMakeClient(flags)
    })
}
