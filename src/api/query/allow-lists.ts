import { type CredentialOptions, isCredentialField } from '../../core/credentials.ts'
import type { ListQueryOptions } from './options.ts'
import { type FieldKind, isNumericKind } from './values.ts'

// The checks of a list query's allow-lists, run once when its routes are built.

/** What the checks read of a field (a `QueryField`). */
interface Field {
  name: string
  key: string
  kind: FieldKind
}

/** The one credential rule (`isCredentialField`), with a resource's own sensitive and exposed fields. */
export function isSensitive(field: Field, credentials: CredentialOptions = {}): boolean {
  return isCredentialField([field.name, field.key], credentials)
}

export type FieldPicker<F extends Field> = (
  names: readonly string[],
  what: string,
  check?: (f: F) => string | undefined,
) => F[]

/** The fields an allow-list names, each known, not sensitive and passing `check`, or a TypeError. */
export function fieldPicker<F extends Field>(
  tableName: string,
  columns: Map<string, F>,
  credentials: CredentialOptions,
): FieldPicker<F> {
  return (names, what, check) =>
    names.map((name) => {
      const field = columns.get(name)
      if (!field)
        throw new TypeError(`defineListQuery(${tableName}): ${what} names unknown field "${name}"`)
      if (isSensitive(field, credentials)) {
        throw new TypeError(
          `defineListQuery(${tableName}): "${name}" is sensitive and cannot be in ${what}`,
        )
      }
      const problem = check?.(field)
      if (problem)
        throw new TypeError(`defineListQuery(${tableName}): ${what} field "${name}" ${problem}`)
      return field
    })
}

export const comparable = (field: Field) =>
  field.kind === 'other' ? `is of a type that cannot be compared` : undefined

/**
 * The fields each aggregate function and `group_by` may name: by default sums and averages over
 * the numeric sortable fields, min, max and groups over every sortable one.
 */
export function aggregateAllowLists<F extends Field>(
  pick: FieldPicker<F>,
  sortable: F[],
  aggregate: NonNullable<ListQueryOptions<object, object>['aggregate']>,
): Record<'sum' | 'avg' | 'min' | 'max' | 'groupBy', Map<string, F>> {
  const isNumericField = (field: F) => isNumericKind(field.kind)
  const numeric = (field: F) => (isNumericField(field) ? undefined : 'is not numeric')
  const sortNames = sortable.map((field) => field.name)
  const numericSorted = sortable.filter(isNumericField).map((field) => field.name)
  const byName = (list: F[]) => new Map(list.map((field) => [field.name, field]))
  return {
    sum: byName(pick(aggregate.sum ?? numericSorted, 'aggregate.sum', numeric)),
    avg: byName(pick(aggregate.avg ?? numericSorted, 'aggregate.avg', numeric)),
    min: byName(pick(aggregate.min ?? sortNames, 'aggregate.min', comparable)),
    max: byName(pick(aggregate.max ?? sortNames, 'aggregate.max', comparable)),
    groupBy: byName(pick(aggregate.groupBy ?? sortNames, 'aggregate.groupBy', comparable)),
  }
}
