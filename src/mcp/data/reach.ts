import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  checkCall,
  DATA_TOOL_NAMES,
  type DataToolName,
  isGranted,
  type McpCaller,
  type ModelAccess,
} from './access.ts'
import { findModel, type McpModel } from './models.ts'

/** A model a caller can reach: the data tools it may use on it, under policy, grant, scopes and tenancy. */
export interface ReachableModel {
  model: McpModel
  access: ModelAccess
  tools: DataToolName[]
}

/**
 * The tools `caller` may use on `model`: those the policy allows, that pass `checkCall`
 * (scopes, tenancy) and that the caller's grant allows. The app's `authorize` hook decides per
 * call and is not consulted here. Empty: the model is out of the caller's reach.
 */
export function reachableTools(
  policy: AccessPolicy,
  model: McpModel,
  caller: McpCaller | undefined,
): DataToolName[] {
  const access = policy.of(model)
  if (!access) return []
  return DATA_TOOL_NAMES.filter((tool) => {
    if (!access.tools.has(tool) || !isGranted(caller, model.resource, tool)) return false
    try {
      checkCall(policy, model, { caller, action: tool })
      return true
    } catch (error) {
      if (error instanceof ToolError) return false
      throw error
    }
  })
}

/** Every model `caller` can reach, in the policy's order. */
export function reachableModels(
  policy: AccessPolicy,
  caller: McpCaller | undefined,
): ReachableModel[] {
  return policy.visibleModels.flatMap((model) => {
    const tools = reachableTools(policy, model, caller)
    return tools.length > 0 ? [{ model, access: policy.of(model)!, tools }] : []
  })
}

/** The reachable model a URI variable or completion context names (any name `findModel` takes). */
export function reachableModel(
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  name: string | undefined,
): ReachableModel | undefined {
  if (name === undefined || name === '') return undefined
  const model = findModel({ models: policy.visibleModels }, name)
  if (!model) return undefined
  const tools = reachableTools(policy, model, caller)
  return tools.length > 0 ? { model, access: policy.of(model)!, tools } : undefined
}
