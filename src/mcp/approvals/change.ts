import { dataTool } from '../data/tools.ts'
import type { ApprovalBinding } from './store.ts'

/** A call in words, as the person approving it sees it: a summary and the values it writes. */
export interface ChangeDescription {
  /** "Delete posts record 5", "Change posts record 5", "Create a posts record": the tool's words. */
  summary: string
  /** Each field written and its new value, as JSON. */
  fields: Array<[name: string, value: string]>
}

/** The one description of a call that the question, the link's text and the page all show. */
export function describeChange(call: Pick<ApprovalBinding, 'tool' | 'args'>): ChangeDescription {
  const model = String(call.args.model ?? '')
  const id = call.args.id === undefined ? '' : JSON.stringify(call.args.id)
  const data = call.args.data
  const fields: Array<[string, string]> =
    data !== null && typeof data === 'object' && !Array.isArray(data)
      ? Object.entries(data as Record<string, unknown>).map(([name, value]) => [
          name,
          JSON.stringify(value) ?? 'null',
        ])
      : []
  // Each writing tool's descriptor words its calls; a name none declares is shown as it is,
  // never as another tool's action.
  const tool = dataTool(call.tool)
  const summary =
    tool?.access === 'write'
      ? tool.approval({ model, id })
      : `Run ${call.tool} on ${model}${id ? ` record ${id}` : ''}`
  return { summary, fields }
}
