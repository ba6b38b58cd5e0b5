import '../core/check-peers.ts'

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
} from './access.ts'
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
} from './crud.ts'
export {
  createDataTools,
  DATA_TOOL_NAMES,
  type DataTools,
  type DataToolsOptions,
  registerDataTools,
} from './data-tools.ts'
export {
  DEFAULT_MESSAGING_DIR,
  DEVELOPER_TOOL_NAMES,
  type DeveloperToolsOptions,
  LISTENER_FILE,
  registerDeveloperTools,
} from './developer-tools.ts'
export {
  callerFromAccessToken,
  type McpEndpointOptions,
  type McpHttpHandlerOptions,
  mcpEndpoint,
  mcpHttpHandler,
} from './http.ts'
export { findListenerImplementations, type ListenerImplementation } from './listeners.ts'
export {
  isSensitiveField,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  SENSITIVE_FIELDS,
} from './models.ts'
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
} from './openapi-bridge.ts'
export type { McpLimit, McpRateLimitOptions } from './rate-limit.ts'
export type { McpRequests, RequestSchema } from './request-schemas.ts'
export { type CreateMcpServerOptions, createMcpServer, type McpServer } from './server.ts'
export { serveStdio } from './stdio.ts'
export {
  CODE_TEMPLATES,
  type CodeTemplate,
  type CodeTemplateInfo,
  readCodeTemplates,
  TEMPLATE_CATEGORIES,
  type TemplateCategory,
} from './templates.ts'
export { AUDIT_OUTCOME, auditOutcomeOf, RefusedError } from './tool-error.ts'
