import { runAggregateQuery } from '../query/aggregate.ts'
import { QueryProblems } from '../query/grammar.ts'
import { planFields } from '../query/plan.ts'
import { runListQuery } from '../query/run.ts'
import { serializeFields } from '../query/serialize.ts'
import type { Row } from '../query/types.ts'
import { found } from '../rest/ids.ts'
import type { ResourceCall, ResourceContext } from './call.ts'
import type { ResourceDefinition } from './define.ts'
import type { RecordLookup } from './records.ts'

/** index, aggregate and show: the reads of a resource. */
export function readOperations(
  resource: ResourceDefinition,
  { db, counts }: ResourceContext,
  lookup: RecordLookup,
) {
  // Lists and aggregates keep to one trash rule (query/trash.ts): `filter[trashed]` asks for
  // trashed records, from a key holding the soft delete's scopes; otherwise they stay out.
  const { softDelete } = resource
  return {
    /** `GET /`: a page, under the list's allow-lists; `include=` reads under the caller's key. */
    index({ request, caller }: ResourceCall) {
      const signal = request.signal
      return runListQuery(resource, request.url, { db, counts, caller, signal, softDelete })
    },

    /** `GET /aggregate`: count, sum, avg, min and max per `group_by`, over the list's filters. */
    aggregate({ request, caller }: ResourceCall) {
      const signal = request.signal
      return runAggregateQuery(resource, request.url, { db, caller, signal, softDelete })
    },

    /** `GET /{id}`: the record, or the fields `fields=` names, as the list gives them. */
    async show({ request, caller, id }: ResourceCall) {
      const fields = new URL(request.url).searchParams.get('fields') ?? undefined
      const problems = new QueryProblems()
      const picked = planFields(resource, fields, problems)
      problems.throwIfAny()
      const row = found(await lookup.find(lookup.readId(id), caller)) as Row
      const data = picked.partial ? serializeFields(picked.output, row) : resource.record(row)
      return { data }
    },
  }
}
