import { call, LINE_WIDTH } from './format.ts'

/**
 * The controller's `GET /aggregate` route (count, sum, avg, min and max per `group_by`, over the
 * list's filters and allow-lists), placed before `/:id` so that it is not read as an id.
 */
export function aggregateRoute(query: string): string {
  return [
    "    .get('/aggregate', read, async function aggregate(c) {",
    "      // The caller's row filter applies to aggregates as to the list; a hang-up cancels it.",
    "      const caller = c.get('apiKey')",
    aggregateCall(query),
    '      return c.json(groups)',
    '    })',
  ].join('\n')
}

/** The `runAggregateQuery` call, laid out as the formatter lays it out (its options hugged). */
function aggregateCall(query: string): string {
  const indent = '      '
  const head = `${indent}const groups = await runAggregateQuery(${query}, c.req.url, {`
  const options = ['db', 'caller', 'signal: c.req.raw.signal']
  const line = `${head} ${options.join(', ')} })`
  if (line.length <= LINE_WIDTH) return line
  if (head.length > LINE_WIDTH) {
    const args = [query, 'c.req.url', `{ ${options.join(', ')} }`]
    return call(indent, 'const groups = await runAggregateQuery', args, '')
  }
  return `${head}\n${options.map((option) => `${indent}  ${option},`).join('\n')}\n${indent}})`
}
