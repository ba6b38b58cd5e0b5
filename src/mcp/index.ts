import '../core/check-peers.ts'

export {
  type Approval,
  type ApprovalGate,
  type ApprovalOptions,
  type ApprovalPagesOptions,
  type ApprovalStatus,
  approvalPages,
  type GateOutcome,
} from './approvals/index.ts'
export { type AuditTrail, type AuditTrailOptions, createAuditTrail } from './audit/audit-trail.ts'
export { DEFAULT_SPEC_PATH, OpenApiBridgeError } from './bridge/openapi-bridge.ts'
export type {
  AccessPolicy,
  Authorize,
  AuthorizeRequest,
  DataToolName,
  McpAccessOptions,
  McpCaller,
  McpModelAccess,
  McpQueries,
  WriteToolName,
} from './data/access.ts'
export { type Crud, type CrudOptions, createCrud } from './data/crud.ts'
export type { ListInput, ListResult } from './data/crud-list.ts'
export {
  createDataTools,
  type DataTools,
  type DataToolsOptions,
  registerDataTools,
} from './data/data-tools.ts'
export type { McpColumn, McpModel, McpModelSource } from './data/models.ts'
export type { McpRequests, RequestSchema } from './data/request-schemas.ts'
export type { ModelWatch } from './data/watch.ts'
export { type McpHttpHandlerOptions, mcpHttpHandler } from './http/endpoint.ts'
export { type McpEndpointOptions, mcpEndpoint } from './http/mcp-endpoint.ts'
export type { McpLimit, McpRateLimitOptions } from './http/rate-limit.ts'
export { type CreateMcpServerOptions, createMcpServer, type McpServer } from './server.ts'
export { serveStdio } from './stdio.ts'
export {
  type ChangeSource,
  type FeedEvent,
  type McpSubscriptions,
  type McpSubscriptionsOptions,
  mcpSubscriptions,
} from './subscriptions/index.ts'
export { AUDIT_OUTCOME, RefusedError, ToolError } from './tool-error.ts'
