import type { ControllerFacts } from './controller-facts.ts'
import { now } from './controller-facts.ts'
import { call, chain, LINE_WIDTH } from './format.ts'

/*
 * The single-record routes of a generated controller, one function per route, and the lookup
 * they share. Each returns its lines as they stand in the controller (a route from `    .get(`
 * to its `    })`).
 */

/**
 * The prepared show query and the record lookups: by id among the caller's rows, and as `show`
 * answers it (a write's If-Match compares its ETag).
 */
export function recordLookup(f: ControllerFacts): string {
  const { t, id, pk, deletedAt, names, ctx } = f
  const live = (key: string) =>
    deletedAt
      ? `and(eq(${t}.${pk.key}, ${key}), isNull(${t}.${deletedAt.key}))`
      : `eq(${t}.${pk.key}, ${key})`
  const runShow = ctx.dialect === 'postgres' ? 'execute' : 'all'
  return `  // Prepared on the first request, then reused: a request only binds its id. Not while the
  // routes are built: SQLite reads the table to prepare, and an app started before its
  // migrations ran answers 503 until they do.
  const prepareShow = () =>
    db
      .select()
      .from(${t})
      .where(${live("sql.placeholder('id')")})
      .prepare(${prepareName(f, 'show')})
  let showQuery: ReturnType<typeof prepareShow> | undefined
${[
  "  /** The record `id` among the rows the caller may reach (the list query's `rows`). */",
  `  const byId = (id: ${id.tsType}, caller: ApiKeyInfo) =>`,
  call(
    '    ',
    'and',
    [
      `eq(${t}.${pk.key}, id)`,
      ...(deletedAt ? [`isNull(${t}.${deletedAt.key})`] : []),
      `rowsWhere(${names.query}, caller)`,
    ],
    '',
  ),
  '  /** The record as the caller may read it: by the prepared query when no row filter applies. */',
  `  const find = async (id: ${id.tsType}, caller: ApiKeyInfo) => {`,
  `    if (!${names.query}.rows) {`,
  '      showQuery ??= prepareShow()',
  `      const [current] = await showQuery.${runShow}({ id })`,
  '      return current',
  '    }',
  chain('    ', 'const [current] = await ', `db.select().from(${t}).where(byId(id, caller))`, ''),
  '    return current',
  '  }',
  "  /** The record as `show` answers it: a write's If-Match is compared with its ETag. */",
  `  const shown = async (id: ${id.tsType}, caller: ApiKeyInfo) => {`,
  '    const current = await find(id, caller)',
  `    return current && { data: ${names.record}(current) }`,
  '  }',
].join('\n')}`
}

/** `GET /`: a page of the list, under its allow-lists; `include=` reads under the caller's key. */
export function indexRoute(f: ControllerFacts): string {
  return `    .get('/', read, async function index(c) {
      // include= reads other resources under their own scopes: the key is the caller. A client
      // that hangs up cancels the query (signal).
      const caller = c.get('apiKey')
${listCall(f.names.query, f.deletedAt ? ['softDelete: trashed'] : [])}
      return c.json(page)
    })`
}

/** `POST /`: one record, or an array of them (all or none), 201. */
export function storeRoute(f: ControllerFacts): string {
  const { t, names, model, passwordColumn, stamped, ctx } = f
  const createBody = bodyCall(
    'parseCreateBody',
    'const { inputs, many }',
    [names.createRequest],
    [
      '...input',
      ...(passwordColumn ? [`${passwordColumn.key}: ${hashCall(f.optionalPassword)}`] : []),
      ...stamped.map((column) => `${column.key}: ${now(column, ctx.dialect)}`),
    ],
    f.input,
  )
  return `    .post('/', write, async function store(c) {${f.readClock}
${createBody}
${chain('      ', 'const rows = await ', `db.insert(${t}).values(inputs).returning().catch(rejectConstraintViolation)`, '')}
      await counts.invalidate('${model.tableName}')
      const data = rows.map(${names.record})
      return c.json({ data: many ? data : found(data[0]) }, 201)
    })`
}

/** `GET /:id`. */
export function showRoute(f: ControllerFacts): string {
  return `    .get('/:id', read, async function show(c) {
      const id = ${f.id.expr}
      const ${f.row} = await find(id, c.get('apiKey'))
${respond(f)}
    })`
}

/** `PUT` or `PATCH /:id`: the fields given change (If-Match checked first). */
export function updateRoute(f: ControllerFacts): string {
  const { t, row, where, touched, setValues, passwordColumn, hashName } = f
  const set = (indent: string) => objectCall(indent, '.set', setValues)
  const updateLines = touched
    ? [
        `      const [${row}] = await db`,
        `        .update(${t})`,
        set('        '),
        `        .where(${where})`,
        `        .returning()`,
        `        .catch(rejectConstraintViolation)`,
      ].join('\n')
    : [
        `      const [${row}] = hasFields(${setValues.length === 1 ? 'input' : `{ ${setValues.join(', ')} }`})`,
        `        ? await db`,
        `            .update(${t})`,
        set('            '),
        `            .where(${where})`,
        `            .returning()`,
        `            .catch(rejectConstraintViolation)`,
        chain('        ', ': await ', `db.select().from(${t}).where(${where})`, '', '            '),
      ].join('\n')
  const body = call(
    '      ',
    `const ${f.input} = await parseJsonBody`,
    ['c.req.raw', f.names.updateRequest],
    '',
  )
  const hashed = 'password === undefined ? undefined : await hashPassword(password)'
  const passwordHash = !passwordColumn
    ? ''
    : `      const ${hashName} = ${hashed}`.length <= LINE_WIDTH
      ? `\n      const ${hashName} = ${hashed}`
      : `\n      const ${hashName} =\n        ${hashed}`
  return `    .on(['PUT', 'PATCH'], '/:id', write, async function update(c) {
      const id = ${f.id.expr}
      const caller = c.get('apiKey')
${body}${passwordHash}
      await checkIfMatch(c.req.raw, () => shown(id, caller))
${updateLines}
${respond(f)}
    })`
}

/** `DELETE /:id`: deleted, or moved to the trash (soft delete); If-Match checked first. */
export function destroyRoute(f: ControllerFacts): string {
  const { t, row, where, deletedAt, trashedAt, model } = f
  return `    .delete('/:id', write, async function destroy(c) {
      const id = ${f.id.expr}
      const caller = c.get('apiKey')
      await checkIfMatch(c.req.raw, () => shown(id, caller))
${
  deletedAt
    ? `      const [${row}] = await db
        .update(${t})
        .set({ ${deletedAt.key}: ${trashedAt} })
        .where(${where})
        .returning()
        .catch(rejectConstraintViolation)`
    : `      const [${row}] = await db
        .delete(${t})
        .where(${where})
        .returning()
        .catch(rejectBlockedDelete)`
}
      found(${row})
      await counts.invalidate('${model.tableName}')
      return c.json({ message: 'Deleted' })
    })`
}

/** The hashed password a create or bulk update writes (optional where the column may be left). */
export function hashCall(optional: boolean): string {
  return optional
    ? 'password === undefined ? undefined : await hashPassword(password)'
    : 'await hashPassword(password)'
}

/** `return c.json({ data: postsQuery.record(found(post)) })`, broken when too long. */
function respond(f: ControllerFacts, status = ''): string {
  const line = `      return c.json({ data: ${f.names.record}(found(${f.row})) }${status})`
  if (line.length <= LINE_WIDTH) return line
  return `${call('      ', `const data = ${f.names.record}`, [`found(${f.row})`], '')}\n      return c.json({ data }${status})`
}

/** Postgres prepared statements are named per connection; SQLite's are anonymous. */
function prepareName(f: ControllerFacts, action: string): string {
  return f.ctx.dialect === 'postgres' ? `'kiln_${f.model.tableName}_${action}'` : ''
}

/**
 * `const x = await parseXxx(c.req.raw, Schema)`, with the function that turns each valid input
 * into the values to write when there is more to it than the input (a hashed password,
 * timestamps).
 */
export function bodyCall(
  parse: string,
  target: string,
  schema: string[],
  values: string[],
  input: string,
): string {
  const indent = '      '
  const head = `${target} = await ${parse}`
  if (values.length === 1) return call(indent, head, ['c.req.raw', ...schema], '')
  const async = values.some((value) => value.includes('await ')) ? 'async ' : ''
  const arrow = `${async}(${input}) => ({`
  const object = values.map((value) => `${indent}    ${value},`).join('\n')
  const hugged = `${indent}${head}(c.req.raw, ${schema.join(', ')}, ${arrow}`
  if (hugged.length <= LINE_WIDTH)
    return `${hugged}\n${object.replace(/^ {2}/gm, '')}\n${indent}}))`
  const args = schema.map((arg) => `${indent}  ${arg},`)
  return [
    `${indent}${head}(`,
    `${indent}  c.req.raw,`,
    ...args,
    `${indent}  ${arrow}`,
    object,
    `${indent}  }),`,
    `${indent})`,
  ].join('\n')
}

/** `.name(input)`, or `.name({ ...input, a: b })`, the object broken one entry per line when long. */
function objectCall(indent: string, name: string, entries: string[]): string {
  if (entries.length === 1) return `${indent}${name}(${entries[0]!.replace('...', '')})`
  const line = `${indent}${name}({ ${entries.join(', ')} })`
  if (line.length <= LINE_WIDTH) return line
  return `${indent}${name}({\n${entries.map((e) => `${indent}  ${e},`).join('\n')}\n${indent}})`
}

/** The index's `runListQuery` call, laid out as the formatter lays it out (its options hugged). */
function listCall(query: string, more: string[] = []): string {
  const indent = '      '
  const head = `${indent}const page = await runListQuery(${query}, c.req.url, {`
  const options = ['db', 'counts', 'caller', 'signal: c.req.raw.signal', ...more]
  const line = `${head} ${options.join(', ')} })`
  if (line.length <= LINE_WIDTH) return line
  if (head.length > LINE_WIDTH) {
    return call(
      indent,
      'const page = await runListQuery',
      [query, 'c.req.url', `{ ${options.join(', ')} }`],
      '',
    )
  }
  return `${head}\n${options.map((option) => `${indent}  ${option},`).join('\n')}\n${indent}})`
}
