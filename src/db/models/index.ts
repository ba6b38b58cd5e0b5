export {
  AUTO_EXCLUDED_FIELDS,
  CREDENTIAL_NAME_PATTERNS,
  type CredentialOptions,
  isCredentialField,
} from '../../core/credentials.ts'
export type { ColumnDataType, ColumnInfo } from './columns.ts'
export { modelName, pluralize, resourceName, singularize, splitWords } from './inflect.ts'
export { jsonSchemaOf, typedJson } from './json-schemas.ts'
export type { PolicyCaller, RowFilter } from './policy.ts'
export {
  createModelRegistry,
  type ModelInfo,
  type ModelRegistry,
  type PostgresModelInfo,
  type SqliteModelInfo,
} from './registry.ts'
