export { type ApiDocsOptions, apiDocs } from './api-docs.ts'
export { DOCS_CSP, redocHtml, redocScript } from './redoc-page.ts'
