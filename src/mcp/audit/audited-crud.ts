import { type Clock, systemClock } from '../../core/clock.ts'
import type { AuditEntry } from '../../db/index.ts'
import type { GateAuditOutcome } from '../approvals/guard.ts'
import type { DataToolName, McpCaller } from '../data/access.ts'
import type { Crud } from '../data/crud-contract.ts'
import { listedIdsOf } from '../data/crud-list.ts'
import { findModel, isSensitiveField, type McpModelSource, primaryKeyOf } from '../data/models.ts'
import { auditOutcomeOf, ToolError } from '../tool-error.ts'
import type { AuditTrail } from './audit-trail.ts'

export interface AuditedCrudOptions {
  trail: AuditTrail
  caller: McpCaller | undefined
  models: McpModelSource
  clock?: Clock | undefined
}

/** The longest model name or message kept in an entry: the rest is the caller's noise. */
const MAX_TEXT = 500

/**
 * The same four operations, each reported to the audit trail once it ends: who called, which
 * tool on which model and records, the names of the fields written, the outcome and how long
 * it took. Recording only buffers an entry: the call never waits for the audit insert.
 */
export function auditedCrud(crud: Crud, options: AuditedCrudOptions): Crud {
  const { trail, models } = options
  const clock = options.clock ?? systemClock

  async function audited<T>(
    tool: DataToolName | 'crud_aggregate',
    input: AuditedInput,
    work: () => Promise<T>,
    idsOf: (result: T, key: string | undefined) => (string | number)[],
  ): Promise<T> {
    const started = clock.now()
    const model = typeof input.model === 'string' ? findModel(models, input.model) : undefined
    const key = model ? primaryKeyOf(model)?.name : undefined
    const entry = (
      outcome: AuditEntry['outcome'],
      ids: (string | number)[],
      message: string | null,
    ): AuditEntry => auditEntry(options, tool, input, started, outcome, ids, message)
    const given = input.id === undefined ? [] : [input.id]
    let result: T
    try {
      result = await work()
    } catch (error) {
      const message = error instanceof ToolError ? error.message : 'The tool failed unexpectedly'
      trail.record(entry(auditOutcomeOf(error), given, message))
      throw error
    }
    trail.record(entry('ok', given.length > 0 ? given : idsOf(result, key), null))
    return result
  }

  return {
    create: (input) =>
      audited(
        'crud_create',
        input,
        () => crud.create(input),
        (created, key) => idOf(created, key),
      ),
    list: (input, options) =>
      audited(
        'crud_list',
        input,
        () => crud.list(input, options),
        // The ids the page read, even when `fields` left the key out of its records.
        (page, key) => listedIdsOf(page) ?? page.records.flatMap((record) => idOf(record, key)),
      ),
    aggregate: (input) =>
      audited(
        'crud_aggregate',
        input,
        () => crud.aggregate(input),
        () => [],
      ),
    update: (input) =>
      audited(
        'crud_update',
        input,
        () => crud.update(input),
        () => [],
      ),
    delete: (input) =>
      audited(
        'crud_delete',
        input,
        () => crud.delete(input),
        () => [],
      ),
  }
}

type AuditedInput = { model: string; id?: string | number; data?: Record<string, unknown> }

/** One entry of the trail: who called, which tool on which model and records, and how it ended. */
function auditEntry(
  options: AuditedCrudOptions,
  tool: DataToolName | 'crud_aggregate',
  input: AuditedInput,
  started: number,
  outcome: AuditEntry['outcome'],
  ids: (string | number)[],
  message: string | null,
): AuditEntry {
  const { trail, caller, models } = options
  const clock = options.clock ?? systemClock
  const model = typeof input.model === 'string' ? findModel(models, input.model) : undefined
  const data = isRecord(input.data) ? input.data : undefined
  return {
    at: new Date(started),
    userId: caller?.userId ?? null,
    tenantId: caller?.tenantId ?? null,
    clientId: caller?.clientId || null,
    tool,
    model: (model?.resource ?? String(input.model)).slice(0, MAX_TEXT),
    recordIds: ids,
    fields: data ? Object.keys(data) : [],
    outcome,
    durationMs: clock.now() - started,
    message: message === null ? null : message.slice(0, MAX_TEXT),
    values: trail.recordsValues && data ? withoutCredentials(data) : null,
  }
}

/**
 * Records what the approval gate decided for a call: waiting for the person
 * (`awaiting_approval`), allowed (`approved`, `client_confirmed`: the operation's own entry
 * follows) or ended there (refused, denied, expired, cancelled).
 */
export function recordHeldCall(
  options: AuditedCrudOptions,
  tool: DataToolName,
  input: Record<string, unknown>,
  started: number,
  outcome: GateAuditOutcome,
  message: string,
): void {
  const given = typeof input.id === 'string' || typeof input.id === 'number' ? [input.id] : []
  options.trail.record(
    auditEntry(options, tool, input as AuditedInput, started, outcome, given, message),
  )
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function idOf(record: Record<string, unknown>, key: string | undefined): (string | number)[] {
  if (key === undefined) return []
  const id = record[key]
  return typeof id === 'string' || typeof id === 'number' ? [id] : []
}

/** The values to record: never a credential field, whatever the caller sent. */
function withoutCredentials(data: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(data)) {
    if (!isSensitiveField(name)) kept[name] = value
  }
  return kept
}
