/**
 * The seam between the OAuth server's pages and the MCP approval pages: one layout, one session
 * form, one page error handler for every page a person sees. Not a subpath export of the package:
 * what an app may use is in `index.ts`. test/structure.test.ts lets a room import this file and
 * `index.ts` of oauth/, nothing deeper.
 */
export { readSessionForm } from './handlers/session-form.ts'
export { oauthErrorHandler } from './http/error-response.ts'
export { htmlResponse, redirectResponse } from './http/page-response.ts'
export { escapeHtml, layout } from './pages/layout.ts'
export { createDatabaseClientStore } from './store/client-store.ts'
