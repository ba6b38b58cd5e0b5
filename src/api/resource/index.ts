export {
  defineResource,
  RESOURCE_OPERATIONS,
  type ResourceDefinition,
  type ResourceOperation,
  type ResourceOptions,
  type ResourceScopes,
} from './define.ts'
export {
  type ResourceCall,
  type ResourceContext,
  type ResourceOperations,
  type ResourceOperationsOptions,
  resourceCall,
  resourceOperations,
  type WriteInput,
} from './operations.ts'
