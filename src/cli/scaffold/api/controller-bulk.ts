import type { ControllerFacts } from './controller-facts.ts'
import { bodyCall, hashCall } from './controller-routes.ts'
import { call, chain, LINE_WIDTH } from './format.ts'

/** `updateMany` (PATCH `/`) and `destroyMany` (DELETE `/?ids=`): all or none, in one transaction. */
export function bulkRoutes(f: ControllerFacts): string {
  const { t: table, where, names, model, passwordColumn, touched, updatedAt, deletedAt } = f
  const { record } = names
  const tableName = model.tableName
  const changes = bodyCall(
    'parseBulkUpdate',
    'const changes',
    [names.updateRequest, 'readId'],
    ['...input', ...(passwordColumn ? [`${passwordColumn.key}: ${hashCall(true)}`] : [])],
    f.input,
  )
  const set = touched ? `{ ...input, ${updatedAt!.key}: ${touched} }` : 'input'
  const trash = deletedAt && { key: deletedAt.key, now: f.trashedAt! }
  const indent = '        '
  const statement = `.update(${table}).set(${set}).where(${where}).returning()`
  // An object with a spread is not a simple argument: the formatter breaks such a chain.
  const update = chain(indent, 'tx', statement, ',', `${indent}  `, set !== 'input')
  const removal = trash
    ? `.update(${table}).set({ ${trash.key}: ${trash.now} }).where(${where}).returning()`
    : `.delete(${table}).where(${where}).returning()`
  const remove = chain(indent, 'tx', removal, ',')
  return `    .patch('/', write, async function updateMany(c) {
      const caller = c.get('apiKey')
${changes}
      const rows = await writeEach(db, changes, (tx, { id, input }) =>
${update}
      ).catch(rejectConstraintViolation)
      return c.json({ data: rows.map(${record}) })
    })
    .delete('/', write, async function destroyMany(c) {
      const caller = c.get('apiKey')
      const ids = parseIdList(c.req.raw, readId)
      await writeEach(db, ids, (tx, id) =>
${remove}
      ).catch(${trash ? 'rejectConstraintViolation' : 'rejectBlockedDelete'})
      await counts.invalidate('${tableName}')
      return c.json({ message: 'Deleted', count: ids.length })
    })`
}

/** `POST /{id}/restore`: clears the soft delete's column (a record not in the trash stays as is). */
export function restoreRoute(f: ControllerFacts): string {
  const { t: table, names, model, pk, id, deletedAt } = f
  const { query, record } = names
  const tableName = model.tableName
  const idExpr = id.expr
  const trash = { key: deletedAt!.key }
  const respond = `      return c.json({ data: ${record}(found(row)) })`
  return `
    .post('/:id/restore', write, async function restore(c) {
      const id = ${idExpr}
      const caller = c.get('apiKey')
${call('      ', 'const where = and', [`eq(${table}.${pk.key}, id)`, `rowsWhere(${query}, caller)`], '')}
      const [row] = await db
        .update(${table})
        .set({ ${trash.key}: null })
        .where(where)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('${tableName}')
${respond.length <= LINE_WIDTH ? respond : `${call('      ', `const data = ${record}`, ['found(row)'], '')}\n      return c.json({ data })`}
    })`
}
