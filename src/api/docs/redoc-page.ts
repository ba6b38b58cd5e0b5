import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { escapeHtml } from '../../core/http/html.ts'
import type { CspDirectives } from '../../core/http/security-headers.ts'

let script: string | undefined

/** The ReDoc standalone bundle, read once from the installed `redoc` package. */
export function redocScript(): string {
  script ??= readFileSync(
    createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'),
    'utf8',
  )
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

/** The HTML of the docs page. */
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
<redoc spec-url="${escapeHtml(specUrl)}"></redoc>
<script src="${escapeHtml(scriptUrl)}"></script>
</body>
</html>
`
}
