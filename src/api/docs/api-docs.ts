import { Hono } from 'hono'
import { NO_SNIFF, securityHeaderValues } from '../../core/http/security-headers.ts'
import { buildOpenApiDocument } from '../openapi/build.ts'
import type { OpenApiDocument, OpenApiResource, RouteInfo } from '../openapi/types.ts'
import { type OpenApi31Document, toOpenApi31 } from '../openapi/version.ts'
import { DOCS_CSP, hasRedoc, redocHtml, redocScript } from './redoc-page.ts'

const DOCS_HEADERS = securityHeaderValues({ csp: DOCS_CSP, cacheControl: 'no-cache' })

/** Options of `apiDocs`. */
export interface ApiDocsOptions {
  /** The app whose registered routes are documented; read on the first request. */
  app: { readonly routes: readonly RouteInfo[] }
  /** Document title (the generated docs routes pass `APP_NAME`). */
  title: string
  version?: string
  description?: string
  /** The API's license, in the documents' `info`. */
  license?: { name: string; url?: string }
  /** Resources with their schemas (the generated module index exports them). */
  resources?: readonly OpenApiResource[]
  /** Routes under this prefix are documented (default `/api/`). */
  apiPrefix?: string
  /** Where the OpenAPI JSON is served (default `/api/openapi.json`). */
  specPath?: string
  /**
   * Where the OpenAPI 3.1 document (JSON Schema 2020-12) is served (default
   * `/api/openapi-3.1.json`); `false` serves none. `specPath` stays OpenAPI 3.0.
   */
  spec31Path?: string | false
  /** Where the ReDoc page is served (default `/api/docs`). */
  docsPath?: string
}

/**
 * The docs routes: `GET /api/openapi.json` (OpenAPI 3.0, built from the app's routes on the
 * first request, then reused), `GET /api/openapi-3.1.json` (the same document as OpenAPI 3.1) and `GET /api/docs` (ReDoc, with its script served by the app
 * from the installed `redoc` package, so the page works without any other host).
 * @example
 * ```ts
 * app.route('/', apiDocs({ app, title: config.appName, version: '1.0.0' }))
 * ```
 */
export function apiDocs(options: ApiDocsOptions): Hono {
  const specPath = options.specPath ?? '/api/openapi.json'
  const docsPath = options.docsPath ?? '/api/docs'
  const scriptPath = `${docsPath}/redoc.standalone.js`
  const spec31Path = options.spec31Path === undefined ? '/api/openapi-3.1.json' : options.spec31Path
  if (!options.app || !Array.isArray(options.app.routes)) {
    throw new TypeError('apiDocs: pass the Hono app whose routes to document as `app`')
  }
  if (!options.title) throw new TypeError('apiDocs: `title` is required (APP_NAME)')

  let built: OpenApiDocument | undefined
  let spec: string | undefined
  let spec31: string | undefined
  let html: string | undefined
  const build = (): OpenApiDocument => {
    built ??= buildOpenApiDocument(options.app.routes, {
      title: options.title,
      version: options.version,
      description: options.description,
      license: options.license,
      apiPrefix: options.apiPrefix,
      resources: options.resources,
      excludePaths: [specPath, docsPath, scriptPath, ...(spec31Path ? [spec31Path] : [])],
    })
    return built
  }
  const document = (): string => {
    spec ??= JSON.stringify(build())
    return spec
  }
  const document31 = (): string => {
    spec31 ??= JSON.stringify(toOpenApi31(build()) satisfies OpenApi31Document)
    return spec31
  }

  const routes = new Hono().get(specPath, function openApiJson(c) {
    c.header('Content-Type', 'application/json; charset=utf-8')
    c.header(NO_SNIFF.name, NO_SNIFF.value)
    c.header('Cache-Control', 'no-cache')
    return c.body(document())
  })
  if (spec31Path) {
    routes.get(spec31Path, function openApi31Json(c) {
      c.header('Content-Type', 'application/json; charset=utf-8')
      c.header(NO_SNIFF.name, NO_SNIFF.value)
      c.header('Cache-Control', 'no-cache')
      return c.body(document31())
    })
  }
  return routes
    .get(docsPath, function redocPage(c) {
      html ??= redocHtml({ title: options.title, specUrl: specPath, scriptUrl: scriptPath })
      return c.html(html, 200, DOCS_HEADERS)
    })
    .get(scriptPath, function redocBundle(c) {
      c.header('Content-Type', 'text/javascript; charset=utf-8')
      c.header('Cache-Control', hasRedoc() ? 'public, max-age=86400' : 'no-cache')
      c.header(NO_SNIFF.name, NO_SNIFF.value)
      return c.body(redocScript())
    })
}
