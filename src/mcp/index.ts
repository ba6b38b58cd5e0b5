export {
  type Crud,
  type CrudOptions,
  createCrud,
  DEFAULT_PER_PAGE,
  type ListInput,
  type ListResult,
  MAX_PER_PAGE,
  type McpCaller,
  ToolError,
} from './crud.ts'
export { DATA_TOOL_NAMES, type DataToolsOptions, registerDataTools } from './data-tools.ts'
export {
  callerFromAccessToken,
  type McpEndpointOptions,
  type McpHttpHandlerOptions,
  mcpEndpoint,
  mcpHttpHandler,
} from './http.ts'
export {
  isSensitiveField,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  SENSITIVE_FIELDS,
} from './models.ts'
export { type CreateMcpServerOptions, createMcpServer } from './server.ts'
