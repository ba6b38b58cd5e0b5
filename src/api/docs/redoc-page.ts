import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { escapeHtml } from '../../core/http/html.ts'
import type { CspDirectives } from '../../core/http/security-headers.ts'

let script: string | undefined
let installed: boolean | undefined

/**
 * Whether the optional `redoc` package is installed. Without it the OpenAPI JSON is served as
 * usual and the docs page says which package to install.
 */
export function hasRedoc(): boolean {
  installed ??= redocBundlePath() !== undefined
  return installed
}

function redocBundlePath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js')
  } catch {
    return undefined
  }
}

/** What the page says when the package is missing: what to install, and where the document is. */
const MISSING_REDOC =
  'The API docs page needs the redoc package, which is not installed: npm install redoc. The OpenAPI document is served beside this page (openapi.json).'

/** What a page cached before the package went missing runs instead of ReDoc. */
const MISSING_REDOC_SCRIPT = `document.body.textContent = ${JSON.stringify(MISSING_REDOC)}\n`

/**
 * The bundle's side menu shows a small logo fetched from the vendor's CDN. The page must ask
 * no other host for anything (and its CSP would refuse it, with a console error), so the
 * logo is served inline instead: the same mark, as a data: URL.
 */
const CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg'
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
    '<rect x="2" y="2" width="12" height="12" rx="3" fill="#ef4136"/></svg>',
)}`

/** The ReDoc standalone bundle, read once from the installed `redoc` package. */
export function redocScript(): string {
  const path = hasRedoc() ? redocBundlePath() : undefined
  if (path === undefined) return MISSING_REDOC_SCRIPT
  script ??= readFileSync(path, 'utf8').replaceAll(CDN_LOGO, INLINE_LOGO)
  return script
}

/**
 * Everything the page loads comes from the app itself: the script, the spec; images and fonts
 * only from the app or data: URLs, so the page renders offline and calls no other host.
 */
export const DOCS_CSP: CspDirectives = {
  'script-src': "'self'",
  'style-src': "'self' 'unsafe-inline'",
  'img-src': "'self' data:",
  'font-src': "'self' data:",
  'connect-src': "'self'",
  'worker-src': "'self' blob:",
  'form-action': "'none'",
}

/** The HTML of the docs page; without the redoc package, a page that says what to install. */
export function redocHtml({
  title,
  specUrl,
  scriptUrl,
}: {
  title: string
  specUrl: string
  scriptUrl: string
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} API</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
${
  hasRedoc()
    ? `<redoc spec-url="${escapeHtml(specUrl)}"></redoc>
<script src="${escapeHtml(scriptUrl)}"></script>`
    : `<p>${escapeHtml(MISSING_REDOC)}</p>
<p><a href="${escapeHtml(specUrl)}">${escapeHtml(specUrl)}</a></p>`
}
</body>
</html>
`
}
