/**
 * Just enough of the project formatter's layout (100 columns, 2 spaces, trailing commas) for
 * the lines of generated code whose length depends on model names, so generated files pass
 * `biome check` as written.
 */
export const LINE_WIDTH = 100

function fits(line: string): boolean {
  return line.length <= LINE_WIDTH
}

/** Splits `a.b(x).c(y)` at its top-level dots: `['a', 'b(x)', 'c(y)']`. */
function segments(expr: string): string[] {
  const parts: string[] = []
  let depth = 0
  let quote: string | undefined
  let start = 0
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i]!
    if (quote) {
      if (ch === '\\') i++
      else if (ch === quote) quote = undefined
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch
    else if ('([{'.includes(ch)) depth++
    else if (')]}'.includes(ch)) depth--
    else if (ch === '/' && depth === 0 && expr[i - 1] === '(') quote = '/'
    else if (ch === '.' && depth === 0 && !/[0-9]/.test(expr[i + 1] ?? '')) {
      parts.push(expr.slice(start, i))
      start = i + 1
    }
  }
  parts.push(expr.slice(start))
  return parts
}

/**
 * `prefix + expr + suffix` on one line when it fits, else a member chain broken one call per
 * line: the head (an identifier and its plain property accesses) stays on the first line.
 * `broken` breaks it however short (a call taking an object with a spread, say).
 */
export function chain(
  indent: string,
  prefix: string,
  expr: string,
  suffix: string,
  continuation = `${indent}  `,
  broken = false,
): string {
  const line = `${indent}${prefix}${expr}${suffix}`
  const parts = segments(expr)
  // Like Prettier, a chain of more than two calls breaks when a call takes an arrow function.
  const calls = parts.filter((part) => part.includes('('))
  const forced = broken || (calls.length > 2 && calls.some((part) => part.includes('=>')))
  if (fits(line) && !forced) return line
  let head = parts.shift() ?? ''
  while (parts.length > 0 && !parts[0]!.includes('(')) head += `.${parts.shift()}`
  if (parts.length === 0) return line
  return (
    [`${indent}${prefix}${head}`, ...parts.map((p) => callLine(continuation, p))].join('\n') +
    suffix
  )
}

/** `.name({ a: true, b: true })`, its object broken one property per line when too long. */
function callLine(indent: string, part: string): string {
  const line = `${indent}.${part}`
  const object = /^(\w+)\(\{ (.*) \}\)$/.exec(part)
  if (fits(line) || !object) return line
  const properties = object[2]!.split(', ').map((property) => `${indent}  ${property},`)
  return `${indent}.${object[1]}({\n${properties.join('\n')}\n${indent}})`
}

/** `import { a, b } from 'x'`, one name per line when it does not fit. */
export function importLine(names: string[], from: string, typeOnly = false): string {
  const keyword = typeOnly ? 'import type' : 'import'
  const line = `${keyword} { ${names.join(', ')} } from '${from}'`
  if (fits(line) || names.length === 1) return line
  return `${keyword} {\n${names.map((n) => `  ${n},`).join('\n')}\n} from '${from}'`
}

/** `prefix + fn(args) + suffix`, one argument per line when it does not fit. */
export function call(indent: string, prefix: string, args: string[], suffix: string): string {
  const line = `${indent}${prefix}(${args.join(', ')})${suffix}`
  if (fits(line)) return line
  return `${indent}${prefix}(\n${args.map((a) => `${indent}  ${a},`).join('\n')}\n${indent})${suffix}`
}

/** `key: value,` in an object literal, the value on its own line when too long. */
export function property(indent: string, key: string, value: string): string {
  const line = `${indent}${key}: ${value},`
  if (fits(line)) return line
  return `${indent}${key}:\n${indent}  ${value},`
}
