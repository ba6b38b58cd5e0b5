/**
 * Schemes that run script, read local files or name browser-internal documents. `blob:` and
 * `filesystem:` URLs carry another origin inside them and are never a client's callback.
 */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'vbscript:',
  'file:',
  'blob:',
  'filesystem:',
  'about:',
])
const LOOPBACK = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/

/**
 * Checks a redirect URI at registration; returns the problem or undefined when acceptable.
 * Absolute, no fragment, no whitespace or control characters anywhere (URL parsers drop tabs
 * and newlines, so `java\nscript:` would otherwise become `javascript:`), never a
 * `javascript:`, `data:`, `vbscript:`, `file:`, `blob:`, `filesystem:` or `about:` URI,
 * `http:` only on loopback; other custom
 * schemes (`cursor://…`, `com.example.app:/cb`) are allowed for native apps.
 * @see RFC 7591 §2, RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §4.1
 */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string'
  if (value.length > 2000) return 'is too long'
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\s\u0000-\u001f\u007f-\u009f\u200b-\u200d\u2028\u2029\ufeff]/.test(value)) {
    return 'must not contain whitespace or control characters'
  }
  if (value.includes('#')) return 'must not contain a fragment'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute URI'
  }
  if (!/^[a-z][a-z0-9+.-]*:/i.test(value)) return 'must be an absolute URI'
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`
  if (url.protocol === 'http:' && !LOOPBACK.test(value)) {
    return 'may use http: only on a loopback address (localhost, 127.0.0.1, [::1])'
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && (url.username || url.password)) {
    return 'must not contain user information'
  }
  return undefined
}

/**
 * Does a requested redirect URI match a registered one? Exact string comparison, except that
 * the port of an `http` loopback URI may differ (native apps get a port when they start);
 * the host must still match exactly: `localhost` is not `127.0.0.1`. @see RFC 8252 §7.3
 */
export function matchesRedirectUri(requested: string, registered: readonly string[]): boolean {
  if (registered.includes(requested)) return true
  const asked = LOOPBACK.exec(requested)
  // A port past 65535 would make the later redirect unbuildable: such a URI matches nothing.
  if (!asked || Number(asked[2] ?? '0') > 65535) return false
  return registered.some((candidate) => {
    const known = LOOPBACK.exec(candidate)
    return known !== null && known[1] === asked[1] && (known[3] ?? '') === (asked[3] ?? '')
  })
}
