export { type ChangeDescription, describeChange } from './change.ts'
export {
  APPROVAL_ID_ARGUMENT,
  APPROVAL_INPUT_KEY,
  type ApprovalGate,
  type ApprovalOptions,
  createApprovalGate,
} from './gate.ts'
export { type GateAuditOutcome, guarded, type OnHeldCall } from './guard.ts'
export { type ApprovalGrant, describeGrant, type GateOutcome, type HeldOutcome } from './outcome.ts'
export { type ApprovalPagesOptions, approvalPages } from './pages.ts'
export { type FieldChange, fieldChanges, type ReadRecord, recordReader } from './preview.ts'
export {
  APPROVAL_TTL_MS,
  type Approval,
  type ApprovalBinding,
  type ApprovalStatus,
  ApprovalStore,
} from './store.ts'
