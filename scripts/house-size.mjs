// The size of the house: src/ lines and files, files over 400 lines, functions over 80 (the
// rule of the project; see docs/architecture.md). `node scripts/house-size.mjs` from the root.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const files = readdirSync('src', { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join('src', f))
let lines = 0
const big = []
const long = []
for (const f of files) {
  const text = readFileSync(f, 'utf8')
  const n = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  lines += n
  if (n > 400) big.push(`${f} ${n}`)
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const a = sf.getLineAndCharacterOfPosition(node.getStart()).line,
        b = sf.getLineAndCharacterOfPosition(node.end).line
      if (b - a + 1 > 80)
        long.push(`${f}:${a + 1} ${b - a + 1} ${node.name?.getText?.() ?? '(anonymous)'}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
}
console.log(`src: ${lines} lines in ${files.length} files`)
console.log(`files over 400 lines: ${big.length}`)
for (const l of big) console.log(`  ${l}`)
console.log(`functions over 80 lines: ${long.length}`)
for (const l of long) console.log(`  ${l}`)
