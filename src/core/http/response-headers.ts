import type { Context } from 'hono'

/**
 * Changes the headers of the answer a handler already made. Most answers take the change in
 * place; one whose headers are immutable (a `Response` from `fetch`, say) is copied once and
 * the copy changed instead.
 */
export function editResponseHeaders(c: Context, edit: (headers: Headers) => void): void {
  try {
    edit(c.res.headers)
  } catch {
    const copy = new Response(c.res.body, c.res)
    edit(copy.headers)
    c.res = copy
  }
}
