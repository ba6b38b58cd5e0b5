import type { ColumnInfo } from '../../../db/models/columns.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import type { ModelNames } from './names.ts'

/** What the templates need to know about the app. */
export interface TemplateContext {
  dialect: 'postgres' | 'sqlite'
  /** Import specifier of the schema module from `<out>/<folder>/`, e.g. `../../schema.js`. */
  schemaImport: string
}

export interface ModelTemplateInput {
  model: ModelInfo
  names: ModelNames
  /** Columns the resource shows (exclusions applied). */
  shown: ColumnInfo[]
  /** Columns left out, for the resource's doc comment. */
  hidden: ColumnInfo[]
  /** Body fields of a create request, and of an update request (never the primary key). */
  createFields: ColumnInfo[]
  updateFields: ColumnInfo[]
  /** The column a `password` input is hashed into (`password_hash`), when the model has one. */
  passwordColumn: ColumnInfo | undefined
  /** Relations `include=` offers, from foreign keys between the generated models. */
  relations?: GeneratedRelation[]
}

/** A relation `include=` offers, as the controller writes it. */
export interface GeneratedRelation {
  name: string
  /** `belongsTo(users, posts.authorId, users.id)` */
  expr: string
  /** Tables of the schema module the expression names. */
  tables: string[]
  helper: 'belongsTo' | 'hasMany'
}
