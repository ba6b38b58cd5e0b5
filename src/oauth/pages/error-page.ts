import { escapeHtml, layout } from './layout.ts'

/** A page for errors that must not go back to the client (unknown client, bad redirect URI). */
export function renderErrorPage(params: { title: string; message: string }): string {
  return layout(
    params.title,
    `<h1>${escapeHtml(params.title)}</h1>
<p role="alert">${escapeHtml(params.message)}</p>
<p class="muted">You can close this window and start again from the application.</p>`,
  )
}
