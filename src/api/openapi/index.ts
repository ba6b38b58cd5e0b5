export { buildOpenApiDocument, type OpenApiOptions } from './build.ts'
export {
  describeRoute,
  type RouteDescription,
  type RouteResponse,
  routeDescription,
} from './describe-route.ts'
export { toSchema } from './json-schema.ts'
export { listQueryParameters } from './list-parameters.ts'
export { toOpenApiPath } from './route-shape.ts'
export type {
  JsonSchema,
  OpenApiDocument,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiResource,
  RouteInfo,
} from './types.ts'
export {
  type OpenApi31Document,
  type OpenApiVersion,
  toOpenApi31,
  toSchema31,
} from './version.ts'
