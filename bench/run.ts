/**
 * `npm run bench -- [name…] [--quick]`: runs the named benchmarks (every bench/*.ts but lib,
 * run, soak and mcp-wrk, which run on their own, when none is named) and prints one markdown table per benchmark, ready for
 * docs/performance.md.
 */
import { readdirSync } from 'node:fs'
import { cpus, freemem, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { type Benchmark, formatTable } from './lib.ts'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const here = fileURLToPath(new URL('.', import.meta.url))
const available = readdirSync(here)
  .filter(
    (file) => file.endsWith('.ts') && !['lib.ts', 'run.ts', 'soak.ts', 'mcp-wrk.ts'].includes(file),
  )
  .map((file) => file.replace(/\.ts$/, ''))
  .sort()
const wanted = args.filter((arg) => !arg.startsWith('--'))
const unknown = wanted.filter((name) => !available.includes(name))
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${available.join(', ')}`)
  process.exit(1)
}

console.log(
  `# kiln benchmarks — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB (${Math.round(freemem() / 2 ** 30)} GiB free)${quick ? ', quick' : ''}\n`,
)
for (const name of wanted.length > 0 ? wanted : available) {
  const module = (await import(new URL(`./${name}.ts`, import.meta.url).href)) as {
    default: Benchmark
  }
  const started = Date.now()
  const results = await module.default({ quick })
  const rss = Math.round(process.memoryUsage().rss / 2 ** 20)
  if (typeof results === 'string') {
    console.log(`## ${name}\n\n${results}\n`)
  } else {
    console.log(`## ${name}\n\n${formatTable(results)}\n`)
    for (const r of results) if (r.notes) console.log(`- ${r.name}: ${r.notes}`)
  }
  console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s, RSS ${rss} MiB)\n`)
}
process.exit(0)
