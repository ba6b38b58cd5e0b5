export type { ColumnDataType, ColumnInfo } from './columns.ts'
export { modelName, pluralize, resourceName, singularize, splitWords } from './inflect.ts'
export {
  importAppModule,
  type LoadedKilnConfig,
  loadKilnConfig,
  loadModelRegistry,
  loadSchemaModule,
} from './load.ts'
export {
  createModelRegistry,
  type ModelInfo,
  type ModelRegistry,
  type PostgresModelInfo,
  type SqliteModelInfo,
} from './registry.ts'
