export { type ApiGuardOptions, apiGuard } from './api-guard.ts'
export { isJsonContentType, type JsonBodyOptions, parseJsonBody, readJson } from './body.ts'
export {
  type BulkChange,
  type BulkOptions,
  type CreateBody,
  MAX_BULK_RECORDS,
  parseBulkUpdate,
  parseCreateBody,
  parseIdList,
  writeEach,
} from './bulk.ts'
export { type DecimalOptions, decimal, int64, jsonValue, uuid } from './column-values.ts'
export { CurrentKeyResponse, currentKeyRoutes } from './current-key.ts'
export { ConflictError, rejectBlockedDelete, rejectConstraintViolation } from './db-errors.ts'
export { privateCache } from './http-cache.ts'
export {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyOptions,
  idempotency,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from './idempotency.ts'
export {
  found,
  type ParseIdOptions,
  type ParseTextIdOptions,
  parseBigIntId,
  parseId,
  parseTextId,
  parseUuid,
} from './ids.ts'
export { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './pagination.ts'
export { checkIfMatch, PreconditionFailedError } from './preconditions.ts'
export {
  createRecordCounter,
  type RecordCounter,
  type RecordCounterOptions,
} from './record-counter.ts'
export { hasFields, type RenameKeys, renameKeys } from './rename-keys.ts'
export { AUTO_EXCLUDED_FIELDS, type ExclusionOptions, isExcludedField, when } from './resources.ts'
export {
  notTrashed,
  type SoftDelete,
  softDeleteColumn,
  softDeletes,
  TRASHED_PARAM,
  trashedCondition,
} from './soft-delete.ts'
export { BODY_FIELD, fieldErrors, validate } from './validation.ts'
export { validationMessage } from './validation-messages.ts'
export { declareRequests, type ModelRequests } from './write-policy.ts'
