import type { AccessPolicy, McpCaller } from './access.ts'
import { reachableModel, reachableModels } from './reach.ts'

/**
 * Completions (`completion/complete`) of the model resources' template variables: the values
 * the data tools' `model` argument and their field arguments (`filters`, `sort`, `fields`,
 * `data`) take. MCP completes prompt arguments and resource-template variables only, so these
 * are offered on `kiln://models/{model}` and `kiln://models/{model}/fields/{field}`. Only what
 * the caller can reach is offered; matching is by prefix, case-insensitive, in the policy's
 * order.
 */
export function completeModel(
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  value: string,
): string[] {
  return byPrefix(
    reachableModels(policy, caller).map(({ model }) => model.resource),
    value,
  )
}

/**
 * The readable field names of the model the context names (`context.arguments.model`); with
 * no model, or one out of reach, those of every model the caller can reach (a field of an
 * unknown model is offered by no model).
 */
export function completeField(
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  value: string,
  model: string | undefined,
): string[] {
  const reach = model === undefined ? undefined : reachableModel(policy, caller, model)
  if (model !== undefined && model !== '' && !reach) return []
  const models = reach ? [reach] : reachableModels(policy, caller)
  const names = models.flatMap(({ access }) => access.readable.map((column) => column.name))
  return byPrefix([...new Set(names)], value)
}

function byPrefix(names: readonly string[], value: string): string[] {
  const prefix = value.toLowerCase()
  return names.filter((name) => name.toLowerCase().startsWith(prefix))
}
