import { Hono } from 'hono'
import { securityHeaderValues } from '../../core/http/security-headers.ts'
import { buildOpenApiDocument, type OpenApiResource, type RouteInfo } from '../openapi/build.ts'
import type { OpenApiDocument } from '../openapi/types.ts'
import { DOCS_CSP, redocHtml, redocScript } from './redoc-page.ts'

const DOCS_HEADERS = securityHeaderValues({ csp: DOCS_CSP, cacheControl: 'no-cache' })

export interface ApiDocsOptions {
  /** The app whose registered routes are documented; read on the first request. */
  app: { readonly routes: readonly RouteInfo[] }
  /** Document title (the generated docs routes pass `APP_NAME`). */
  title: string
  version?: string
  description?: string
  /** Resources with their schemas (the generated module index exports them). */
  resources?: readonly OpenApiResource[]
  /** Routes under this prefix are documented (default `/api/`). */
  apiPrefix?: string
  /** Where the OpenAPI JSON is served (default `/api/openapi.json`). */
  specPath?: string
  /** Where the ReDoc page is served (default `/api/docs`). */
  docsPath?: string
}

/**
 * The docs routes: `GET /api/openapi.json` (OpenAPI 3.0, built from the app's routes on the
 * first request, then reused) and `GET /api/docs` (ReDoc, with its script served by the app
 * from the installed `redoc` package, so the page works without any other host).
 */
export function apiDocs(options: ApiDocsOptions): Hono {
  const specPath = options.specPath ?? '/api/openapi.json'
  const docsPath = options.docsPath ?? '/api/docs'
  const scriptPath = `${docsPath}/redoc.standalone.js`
  if (!options.app || !Array.isArray(options.app.routes)) {
    throw new TypeError('apiDocs: pass the Hono app whose routes to document as `app`')
  }
  if (!options.title) throw new TypeError('apiDocs: `title` is required (APP_NAME)')

  let spec: string | undefined
  let html: string | undefined
  const document = (): string => {
    spec ??= JSON.stringify(
      buildOpenApiDocument(options.app.routes, {
        title: options.title,
        version: options.version,
        description: options.description,
        apiPrefix: options.apiPrefix,
        resources: options.resources,
        excludePaths: [specPath, docsPath, scriptPath],
      }) satisfies OpenApiDocument,
    )
    return spec
  }

  return new Hono()
    .get(specPath, function openApiJson(c) {
      c.header('Content-Type', 'application/json; charset=utf-8')
      c.header('Cache-Control', 'no-cache')
      return c.body(document())
    })
    .get(docsPath, function redocPage(c) {
      html ??= redocHtml({ title: options.title, specUrl: specPath, scriptUrl: scriptPath })
      return c.html(html, 200, DOCS_HEADERS)
    })
    .get(scriptPath, function redocBundle(c) {
      c.header('Content-Type', 'text/javascript; charset=utf-8')
      c.header('Cache-Control', 'public, max-age=86400')
      c.header('X-Content-Type-Options', 'nosniff')
      return c.body(redocScript())
    })
}
