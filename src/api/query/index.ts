export {
  AGGREGATE_FUNCTIONS,
  type AggregateContext,
  type AggregateEnvelope,
  type AggregateGroup,
  type AggregatePlan,
  planAggregateQuery,
  runAggregateQuery,
} from './aggregate.ts'
export { type BoundCondition, type CountResult, countRecords } from './count.ts'
export { type CursorPosition, decodeCursor, encodeCursor, setCursorKey } from './cursor.ts'
export {
  defineListQuery,
  type ListQuery,
  type ListQueryDefinition,
  type QueryCaller,
  type QueryField,
  rowsWhere,
} from './definition.ts'
export { type QueryInput, readListQuery } from './grammar.ts'
export {
  COUNT_STRATEGIES,
  type CountStrategy,
  DEFAULT_QUERY_LIMITS,
  FILTER_OPERATORS,
  type FilterOperator,
  type QueryLimits,
} from './limits.ts'
export {
  belongsTo,
  hasMany,
  type ListQueryOptions,
  type RelationSpec,
  type SearchMode,
} from './options.ts'
export { type ListQueryPlan, planListQuery } from './plan.ts'
export { foreignKeyRelations } from './relations.ts'
export {
  type ListEnvelope,
  type ListLinks,
  type ListMeta,
  type ListQueryContext,
  runListQuery,
} from './run.ts'
export { searchIndexMigration } from './search-index.ts'
export { softDeleteOf, type TrashedRead, trashedRead } from './trash.ts'
