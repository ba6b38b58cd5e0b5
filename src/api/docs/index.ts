export { type ApiDocsOptions, apiDocs } from './api-docs.ts'
export { DOCS_CSP, hasRedoc, redocHtml, redocScript } from './redoc-page.ts'
