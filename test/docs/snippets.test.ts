import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import { createDemoContext } from '../../examples/demo/src/context.ts'
import { generateApiClient } from '../../src/api/index.ts'
import { silentLogger } from '../../src/core/index.ts'

/**
 * Every `ts` block of README.md and docs/, and every `@example` of src/'s doc comments, is
 * type-checked against kiln's sources, so that a snippet cannot drift from the API it shows. A block may use the names of the entry point
 * (test/docs/snippet-context.ts), import the app's `./schema.ts` (the demo's tables),
 * `./api/index.js` (its generated API) and `./api-client.ts` (the typed client `kilnjs
 * make:client` writes from the demo's OpenAPI document), and must import or define everything else. A block that is
 * deliberately not code (a signature sketch, a fragment with `…`) is preceded by
 * `<!-- not type-checked: <why> -->`, and the reason is required.
 */
const repo = join(import.meta.dirname, '../..')
const work = join(repo, 'tmp', `doc-snippets-${process.pid}`)
const SKIP = /<!--\s*not type-checked:\s*(.*?)\s*-->\s*$/

interface Snippet {
  doc: string
  line: number
  code: string
  skipReason: string | undefined
}

function docSnippets(): Snippet[] {
  const docs = [
    'README.md',
    ...readdirSync(join(repo, 'docs'), { recursive: true })
      .map(String)
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ]
  const snippets: Snippet[] = []
  for (const doc of docs) {
    const text = readFileSync(join(repo, doc), 'utf8')
    for (const match of text.matchAll(/^( *)```(?:ts|typescript)\n([\s\S]*?)^\1```/gm)) {
      const before = text.slice(0, match.index)
      const previous = before.trimEnd().split('\n').at(-1) ?? ''
      snippets.push({
        doc,
        line: before.split('\n').length,
        code: (match[2] ?? '').replace(new RegExp(`^${match[1]}`, 'gm'), ''),
        skipReason: SKIP.exec(previous)?.[1],
      })
    }
  }
  return snippets
}

/** Each entry point's names (test/package/surface/), by name: `createPurgeApi` → `kilnjs/cdn`. */
function entryOfName(): Map<string, string> {
  const entries = new Map<string, string>()
  for (const list of readdirSync(join(repo, 'test/package/surface'))) {
    const entry = list === 'kilnjs.txt' ? 'kilnjs' : `kilnjs/${list.replace(/\.txt$/, '')}`
    for (const line of readFileSync(join(repo, 'test/package/surface', list), 'utf8').split('\n')) {
      const name = line.trim().split(' ')[0]
      if (name && !name.startsWith('#') && !entries.has(name)) entries.set(name, entry)
    }
  }
  return entries
}

/**
 * The `@example` blocks of src/'s doc comments. An example shows a call as an app writes it, so
 * it is checked with the names a page may use; the kiln functions and classes it calls or
 * constructs are imported from their entry point, as the app would.
 */
function sourceExamples(): Snippet[] {
  const entries = entryOfName()
  const snippets: Snippet[] = []
  for (const file of sourceFiles()) {
    const text = readFileSync(join(repo, 'src', file), 'utf8')
    for (const match of text.matchAll(/^ \* @example\n \* ```ts\n([\s\S]*?)^ \* ```/gm)) {
      const code = (match[1] ?? '').replace(/^ \* ?/gm, '')
      const called = [...code.matchAll(/(?:new )?\b([A-Za-z_$][\w$]*)(?=\()/g)]
        .map((m) => m[1] as string)
        .filter((name) => entries.has(name))
      const imports = [...new Set(called)].map(
        (name) => `import { ${name} } from '${entries.get(name)}'`,
      )
      snippets.push({
        doc: `src/${file}`,
        line: text.slice(0, match.index).split('\n').length + 1 - imports.length,
        code: `${imports.join('\n')}\n${code}`,
        skipReason: undefined,
      })
    }
  }
  return snippets
}

const sourceFiles = () =>
  readdirSync(join(repo, 'src'), { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.ts'))

/** The `@example` tags of src/ not written as the ```ts block the check above reads. */
function uncheckedExamples(): string[] {
  return sourceFiles().flatMap((file) => {
    const lines = readFileSync(join(repo, 'src', file), 'utf8').split('\n')
    return lines.flatMap((line, i) =>
      /(^|\s)@example\b/.test(line) && !(line === ' * @example' && lines[i + 1] === ' * ```ts')
        ? [`src/${file}:${i + 1}`]
        : [],
    )
  })
}

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the code blocks of README.md and docs/, and the @example blocks of src/', () => {
  const snippets = [...docSnippets(), ...sourceExamples()]

  it('every @example of src/ opens a ```ts block, so that none escapes the check', () => {
    expect(uncheckedExamples()).toEqual([])
  })

  it('each skipped block says why', () => {
    for (const snippet of snippets) {
      if (snippet.skipReason !== undefined) {
        expect(snippet.skipReason, `${snippet.doc}:${snippet.line}`).not.toBe('')
      }
    }
  })

  it('type-check against kiln, each block a module of its own', async () => {
    mkdirSync(work, { recursive: true })
    const files = new Map<string, Snippet>()
    for (const snippet of snippets.filter((s) => s.skipReason === undefined)) {
      const name = `${snippet.doc.replace(/[/.]/g, '_')}_L${snippet.line}.ts`
      writeFileSync(join(work, name), `${snippet.code}\nexport {}\n`)
      files.set(name, snippet)
    }
    const context = relative(work, join(repo, 'test/docs/snippet-context.ts'))
    const exampleContext = relative(work, join(repo, 'test/docs/example-context.ts'))
    // The app's own modules a block may import: the demo's tables and its generated API.
    mkdirSync(join(work, 'api'), { recursive: true })
    const demo = (path: string) => relative(work, join(repo, 'examples/demo/src', path))
    writeFileSync(join(work, 'schema.ts'), `export * from '${demo('schema.ts')}'\n`)
    writeFileSync(
      join(work, 'api/index.ts'),
      `export * from '${relative(join(work, 'api'), join(repo, 'examples/demo/src/api/index.ts'))}'\n`,
    )
    // The typed client of the demo's API, as `kilnjs make:client` writes it.
    const demoContext = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: { DEMO_EMAIL: 'demo@example.com', DEMO_PASSWORD: 'correct horse battery' },
    })
    try {
      const demoApp = await createDemoApp(demoContext)
      const document = await (await demoApp.request('/api/openapi.json')).json()
      writeFileSync(join(work, 'api-client.ts'), generateApiClient(document))
    } finally {
      await demoContext.close()
    }
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(work, join(repo, 'tsconfig.json')),
        compilerOptions: { noUnusedLocals: false, allowUnusedLabels: false },
        include: ['./*.ts', './api/*.ts', context, exampleContext],
        exclude: [],
      }),
    )
    const tsc = join(repo, 'node_modules/typescript/bin/tsc')
    const output = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', work], {
      cwd: repo,
    }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    // Each error is reported at the doc's own line, as a reader would look for it.
    const errors = output
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const match = /([^/\\]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
        const snippet = match && files.get(match[1] as string)
        if (!match || !snippet) return line
        return `${snippet.doc}:${snippet.line + Number(match[2])}: ${match[4]}`
      })
    expect(errors).toEqual([])
    expect(files.size).toBeGreaterThan(40)
  }, 300_000)
})
