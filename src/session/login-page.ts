import { escapeHtml } from '../core/http/html.ts'

/** What the login page shows; `renderPage` receives it. */
export interface LoginPageProps {
  /** Form action, e.g. `/login`. */
  action: string
  csrfToken: string
  returnTo: string
  email: string
  error?: string | undefined
  appName: string
}

/** kiln's plain sign-in page: inputs `email` and `password`, no script, no outside asset. */
export function renderLoginPage(props: LoginPageProps): string {
  const error = props.error ? `<p class="error" role="alert">${escapeHtml(props.error)}</p>` : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · ${escapeHtml(props.appName)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{font:inherit;width:100%;padding:.45rem;box-sizing:border-box}
button{font:inherit;margin-top:1.25rem;padding:.5rem 1.2rem}
.error{color:#b3261e;font-weight:600}
</style>
</head>
<body>
<main>
<h1>Sign in</h1>
${error}
<form method="post" action="${escapeHtml(props.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(props.csrfToken)}">
<input type="hidden" name="return_to" value="${escapeHtml(props.returnTo)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(props.email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`
}
