/**
 * What a benchmark server allocates, by function: reads the `.heapprofile` files written with
 * KILN_BENCH_ALLOC_PROF (bench/http/server.ts) and prints the functions that allocated most
 * (self), with their file, and the total. Divided by the requests served, the total is the
 * allocation per request that the young generation's collections pay for.
 *
 * `npx tsx bench/allocations.ts <file.heapprofile> [requests] [top]`
 */
import { readFileSync } from 'node:fs'

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: Node[]
}

const [file, requestsArg, topArg] = process.argv.slice(2)
if (!file) throw new TypeError('usage: allocations.ts <file.heapprofile> [requests] [top]')
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: Node }
const byFunction = new Map<string, number>()
let total = 0
const walk = (node: Node) => {
  const { functionName, url, lineNumber } = node.callFrame
  const where = url.replace(/^.*\/(node_modules|src|bench|examples)\//, '$1/')
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize)
  total += node.selfSize
  for (const child of node.children) walk(child)
}
walk(head)
const requests = Number(requestsArg ?? 0)
const per = (bytes: number) =>
  requests > 0 ? `${(bytes / requests).toFixed(0)} B/req` : `${(bytes / 2 ** 20).toFixed(1)} MiB`
console.log(`total: ${per(total)}`)
for (const [key, bytes] of [...byFunction]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(topArg ?? 30)))
  console.log(
    `${per(bytes).padStart(12)}  ${((bytes / total) * 100).toFixed(1).padStart(5)}%  ${key}`,
  )
