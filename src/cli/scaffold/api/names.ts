import { camelCase, splitWords } from '../../../db/models/inflect.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'

/** The identifiers and file names generated for one model. */
export interface ModelNames {
  /** `BlogPost` */
  model: string
  /** `blog_posts`: the URL segment and the OpenAPI tag. */
  resource: string
  /** `blogPosts`: the table's export in the schema module. */
  table: string
  /** `blogPost`: the parameter of the resource conversion. */
  variable: string
  /** `blogPostsController` */
  controller: string
  /** `blogPostsResource`: the resource's definition (`defineResource`) */
  definition: string
  /** `BlogPostResource`, `toBlogPostResource` */
  resourceType: string
  toResource: string
  /** `CreateBlogPostRequest`, `UpdateBlogPostRequest` */
  createRequest: string
  updateRequest: string
  /** `blog-posts` (controller file) and `blog-post` (resource and request files). */
  pluralFile: string
  singularFile: string
}

const RESERVED = new Set([
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'let',
  'static',
  'await',
  'implements',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'z',
  'c',
  'db',
  'id',
  'input',
  // Names the generated controller itself declares or imports.
  'eq',
  'sql',
  'found',
  'page',
  'rows',
  'total',
  'data',
  'counts',
  'read',
  'write',
  'password',
])

export function modelNames(model: ModelInfo): ModelNames {
  const singular = splitWords(model.name)
  const plural = splitWords(model.resource)
  const variable = camelCase(model.name)
  return {
    model: model.name,
    resource: model.resource,
    table: model.exportName,
    // `const [user] = …` must not shadow a table exported as `user`.
    variable:
      RESERVED.has(variable) || variable === model.exportName
        ? model.exportName === 'record'
          ? 'row'
          : 'record'
        : variable,
    controller: `${camelCase(model.resource)}Controller`,
    definition: `${camelCase(model.resource)}Resource`,
    resourceType: `${model.name}Resource`,
    toResource: `to${model.name}Resource`,
    createRequest: `Create${model.name}Request`,
    updateRequest: `Update${model.name}Request`,
    pluralFile: plural.join('-'),
    singularFile: singular.join('-'),
  }
}
