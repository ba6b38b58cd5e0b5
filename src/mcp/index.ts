import '../core/check-peers.ts'

export {
  APPROVAL_ID_ARGUMENT,
  APPROVAL_TTL_MS,
  type Approval,
  type ApprovalGate,
  type ApprovalOptions,
  type ApprovalPagesOptions,
  type ApprovalStatus,
  ApprovalStore,
  approvalPages,
  createApprovalGate,
  type GateOutcome,
} from './approvals/index.ts'
export { type AuditTrail, type AuditTrailOptions, createAuditTrail } from './audit/audit-trail.ts'
export {
  type BridgeOperation,
  callOperation,
  createOpenApiBridgeServer,
  currentKeyPath,
  DEFAULT_SPEC_PATH,
  fetchKeyScopes,
  fetchOpenApiDocument,
  OpenApiBridgeError,
  type OpenApiBridgeOptions,
  type OperationsOptions,
  operationsFromDocument,
  toolName,
} from './bridge/openapi-bridge.ts'
export {
  type AccessPolicy,
  type Authorize,
  type AuthorizeRequest,
  type DataToolName,
  DEFAULT_TOOL_SCOPES,
  type McpAccessOptions,
  type McpModelAccess,
  type McpQueries,
  resolveAccess,
  type WriteToolName,
} from './data/access.ts'
export {
  accessPolicyOf,
  type Crud,
  type CrudOptions,
  createCrud,
  DEFAULT_PER_PAGE,
  type ListInput,
  type ListResult,
  MAX_PER_PAGE,
  type McpCaller,
  ToolError,
} from './data/crud.ts'
export {
  createDataTools,
  DATA_TOOL_NAMES,
  type DataTools,
  type DataToolsOptions,
  registerDataTools,
} from './data/data-tools.ts'
export {
  isSensitiveField,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  SENSITIVE_FIELDS,
} from './data/models.ts'
export type { McpRequests, RequestSchema } from './data/request-schemas.ts'
export {
  DEFAULT_MESSAGING_DIR,
  DEVELOPER_TOOL_NAMES,
  type DeveloperToolsOptions,
  LISTENER_FILE,
  registerDeveloperTools,
} from './developer/developer-tools.ts'
export { findListenerImplementations, type ListenerImplementation } from './developer/listeners.ts'
export {
  CODE_TEMPLATES,
  type CodeTemplate,
  type CodeTemplateInfo,
  readCodeTemplates,
  TEMPLATE_CATEGORIES,
  type TemplateCategory,
} from './developer/templates.ts'
export {
  callerFromAccessToken,
  type McpEndpointOptions,
  type McpHttpHandlerOptions,
  mcpEndpoint,
  mcpHttpHandler,
} from './http/endpoint.ts'
export type { McpLimit, McpRateLimitOptions } from './http/rate-limit.ts'
export { type CreateMcpServerOptions, createMcpServer, type McpServer } from './server.ts'
export { serveStdio } from './stdio.ts'
export { AUDIT_OUTCOME, auditOutcomeOf, RefusedError } from './tool-error.ts'
