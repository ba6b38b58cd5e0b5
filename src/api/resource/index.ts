export {
  type ResourceCall,
  type ResourceContext,
  resourceCall,
  type WriteCall,
} from './call.ts'
export {
  defineResource,
  RESOURCE_OPERATIONS,
  type ResourceDefinition,
  type ResourceOperation,
  type ResourceOptions,
  type ResourceScopes,
} from './define.ts'
export { type ChangeView, changeView } from './events.ts'
export {
  type ResourceOperations,
  type ResourceOperationsOptions,
  resourceOperations,
  type WriteInput,
} from './operations.ts'
