import type { OpenApiResource } from './types.ts'

/** The HTTP methods the document describes. */
export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
export type Method = (typeof METHODS)[number]

/** `/api/v1/posts/:id{[0-9]+}` → `/api/v1/posts/{id}`. */
export function toOpenApiPath(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      const match = /^:([A-Za-z0-9_]+)/.exec(segment)
      return match ? `{${match[1]}}` : segment
    })
    .join('/')
}

/** What a route's path says about it: its resource, and whether it is the collection or a record. */
export interface Shape {
  tag: string
  resource: OpenApiResource | undefined
  kind: 'collection' | 'item' | 'other'
  /** Static segments after the resource (custom routes). */
  rest: string[]
  params: string[]
}

export function classify(
  path: string,
  prefix: string,
  resources: Map<string, OpenApiResource>,
): Shape {
  const segments = path.slice(prefix.length).split('/').filter(Boolean)
  if (segments[0] && /^v[0-9]+$/.test(segments[0])) segments.shift()
  const tag = segments[0] && !isParam(segments[0]) ? segments[0] : 'api'
  const resource = resources.get(tag)
  const params = segments.filter(isParam).map((s) => s.slice(1, -1))
  const rest = segments.slice(1).filter((s) => !isParam(s))
  // Only a declared resource gets the CRUD shapes (a paginated list, `{data}` records): a
  // custom `GET /api/v2/ping` is not a list because it has one segment.
  let kind: Shape['kind'] = 'other'
  if (resource && segments.length === 1) kind = 'collection'
  else if (resource && segments.length === 2 && isParam(segments[1]!)) kind = 'item'
  return { tag, resource, kind, rest, params }
}

/** `GET /api/v1/{resource}/aggregate`, the route the generated controllers add. */
export function isAggregate(shape: Shape): boolean {
  return shape.rest.length === 1 && shape.rest[0] === 'aggregate'
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}')
}
