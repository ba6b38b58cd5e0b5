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
export type { JsonSchema, OpenApiDocument, OpenApiOperation, OpenApiParameter } from './types.ts'
