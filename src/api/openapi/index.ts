export {
  buildOpenApiDocument,
  type OpenApiOptions,
  type OpenApiResource,
  type RouteInfo,
  toOpenApiPath,
  toSchema,
} from './build.ts'
export {
  describeRoute,
  type RouteDescription,
  type RouteResponse,
  routeDescription,
} from './describe-route.ts'
export { listQueryParameters } from './list-parameters.ts'
export type { JsonSchema, OpenApiDocument, OpenApiOperation, OpenApiParameter } from './types.ts'
export {
  type OpenApi31Document,
  type OpenApiVersion,
  toOpenApi31,
  toSchema31,
} from './version.ts'
