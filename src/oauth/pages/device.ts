import { escapeHtml, layout } from './layout.ts'

/** The page where a person types (or confirms) the code their device shows. */
export function renderDeviceEntryPage(params: {
  action: string
  csrfToken: string
  userCode: string
  error?: string
}): string {
  const error = params.error
    ? `<p class="error" role="alert" id="user-code-error">${escapeHtml(params.error)}</p>`
    : ''
  const describedBy = params.error ? ' aria-describedby="user-code-error"' : ''
  return layout(
    'Connect a device',
    `<h1>Connect a device</h1>
<p>Enter the code shown on your device.</p>
${error}
<form method="post" action="${escapeHtml(params.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(params.csrfToken)}">
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" value="${escapeHtml(params.userCode)}"
  placeholder="XXXX-XXXX" autocomplete="one-time-code" autocapitalize="characters"
  spellcheck="false" maxlength="20" required${describedBy}>
<div class="actions">
<button type="submit" class="primary">Continue</button>
</div>
</form>`,
  )
}

/** The page after Approve or Deny on the device flow. */
export function renderDeviceResultPage(approved: boolean): string {
  const title = approved ? 'Device connected' : 'Request denied'
  const message = approved
    ? 'You can return to your device; it will continue on its own.'
    : 'The device was not given access. You can close this window.'
  return layout(title, `<h1>${title}</h1>\n<p role="status">${message}</p>`)
}
