/**
 * Escapes text for HTML element content and quoted attribute values. kiln's pages build HTML
 * from strings with this one function (or `hono/html`, which escapes the same characters).
 */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}
