import type { Context } from 'hono'
import { html, raw } from 'hono/html'
import type { HtmlEscapedString } from 'hono/utils/html'
import { securityHeaderValues } from 'kilnjs/core'

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { max-width: 44rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
  label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
  input { font: inherit; padding: .4rem .5rem; width: 100%; box-sizing: border-box; }
  button { font: inherit; padding: .45rem 1.1rem; margin-top: 1rem; cursor: pointer; }
  .error { color: #b3261e; font-weight: 600; }
  table { border-collapse: collapse; width: 100%; }
  td, th { border-bottom: 1px solid #8884; padding: .3rem .4rem; text-align: left; }
  code { font-size: .95em; }
`

const PAGE_HEADERS = securityHeaderValues({
  csp: { 'img-src': "'self' data:", 'form-action': "'self'" },
})

/** Headers every demo page carries: kiln's page security headers, images from the app itself. */
export function pageHeaders(c: Context): void {
  for (const [header, value] of Object.entries(PAGE_HEADERS)) c.header(header, value)
}

export function page(title: string, body: HtmlEscapedString | Promise<HtmlEscapedString>) {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <style>${raw(STYLE)}</style>
  </head>
  <body>
    <main>
      <h1>${title}</h1>
      ${body}
    </main>
  </body>
</html>`
}
