/**
 * The seam between the REST API and the MCP data tools: the query, validation and soft-delete
 * pieces both surfaces read, so that a rule written once here reaches both. Not a subpath export
 * of the package: what an app may use is in `index.ts`. test/structure.test.ts lets a room import
 * this file and `index.ts` of api/, nothing deeper.
 */

export { operatorsOf, valueSchema } from './openapi/list-parameters.ts'
export {
  buildListQuery,
  describeFields,
  type QueryField,
  type ResolvedRelation,
} from './query/definition.ts'
export { listedRecord } from './query/one.ts'
export { recordMaker } from './query/record.ts'
export { toJsonValue } from './query/values.ts'
export { resourceWrites } from './resource/operations.ts'
export { decimal, int64, uuid } from './rest/column-values.ts'
export { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './rest/pagination.ts'
export {
  notTrashed,
  type SoftDelete,
  softDeleteColumn,
  softDeletes,
} from './rest/soft-delete.ts'
export { BODY_FIELD, fieldErrors } from './rest/validation.ts'
export { mustBe, mustBeOneOf, validationMessage } from './rest/validation-messages.ts'
