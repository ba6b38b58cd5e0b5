/**
 * Field names a generated resource leaves out unless `--include-all` is given (the
 * specification's rule). Matching is on the whole name, case-insensitive: `token` is excluded,
 * `token_count` is not.
 */
export const AUTO_EXCLUDED_FIELDS: readonly string[] = [
  'password',
  'password_hash',
  'hashed_password',
  'secret',
  'token',
  'api_key',
  'hashed_key',
  'remember_token',
]

/**
 * The wider net: column names that look like credentials, matched on the snake_case name
 * (`passwordDigest` is `password_digest`). A column caught here never leaves the server
 * through REST or the MCP tools unless the app exposes it by name.
 */
export const CREDENTIAL_NAME_PATTERNS: readonly RegExp[] = [
  // Any stored password, hashed or not: password_digest, encrypted_password, reset_password_token.
  /password/,
  // A passphrase is a password by another name (ssh_passphrase, key_passphrase).
  /passphrase/,
  // Rails' has_secure_password and token digests: password_digest, remember_digest.
  /_digest$/,
  // Shared secrets of every kind: client_secret, otp_secret, webhook_secret, secret_key.
  /secret/,
  // Bearer values: access_token, refresh_token, reset_token, confirmation_token (not token_count).
  /_token$/,
  // Their stored hashes: token_hash, refresh_token_hash, session_token_digest.
  /(^|_)token_(hash|digest)$/,
  // Unix's and shorthand spellings: passwd, user_pwd, pwd_hash (not pwd_changed_at, a time).
  /passwd/,
  /(^|_)pwd(_hash)?$/,
  // Keys that sign, encrypt or open sessions: session_key, signing_key, encryption_key,
  // master_key (not keyboard, monkey or sort_key).
  /(^|_)(session|signing|encryption|master)_key$/,
  // Second-factor seeds: totp_seed, mfa_seed (not random_seed).
  /(^|_)(totp|hotp|mfa)_seed$/,
  // One-time-password seeds and backup codes: otp_secret, otp_backup_codes.
  /^otp/,
  // Recovery and backup codes let their holder past a second factor.
  /(recovery|backup)_codes?$/,
  // Signing and decryption keys: private_key, jwt_private_key_pem.
  /private_key/,
  // API keys and their hashes: api_key, apikey (APIKey), api_key_hash, stripe_api_key.
  /(^|_)api_?key/,
  // Devise and attr_encrypted store encrypted credentials: encrypted_otp_secret.
  /^encrypted_/,
  // A salt is half of a password hash: salt, password_salt.
  /(^|_)salt$/,
]

/**
 * A cheap first test for the logger, which looks at every line: a name the rule above catches
 * holds one of these stems, in snake_case or camelCase alike (no stem has an underscore, which
 * is all `snakeCase` adds). A line with none of them needs no look at its keys. A new pattern
 * needs its stem here; test/core/logger.test.ts checks the two agree on the rule's examples.
 */
export const CREDENTIAL_STEMS =
  /pass|pwd|digest|secret|token|otp|mfa|code|private|api_?key|(session|signing|encryption|master)_?key|hashed|encrypted|salt/i

/** `passwordDigest` → `password_digest`; snake_case names are unchanged (lowercased). */
function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()
}

/** Options of `isCredentialField`. */
export interface CredentialOptions {
  /** Further fields the app marks sensitive (by column or property name). */
  sensitive?: readonly string[] | undefined
  /** Fields the app opts in one by one: a credential-looking name listed here is shown. */
  expose?: readonly string[] | undefined
}

/**
 * Whether a field is a credential that no reader (REST lists and records, `include`, the MCP
 * tools, the OpenAPI document) may show, filter, sort or search by default: one of the
 * specification's names, a name that looks like a credential, or one the app marked sensitive,
 * unless the app exposed it. `names` are the field's names (column and property).
 */
export function isCredentialField(
  names: string | readonly string[],
  { sensitive = [], expose = [] }: CredentialOptions = {},
): boolean {
  const candidates = (typeof names === 'string' ? [names] : names).map(snakeCase)
  const listed = (list: readonly string[]) =>
    candidates.some((name) => list.some((entry) => snakeCase(entry) === name))
  if (listed(sensitive)) return true
  if (listed(expose)) return false
  return candidates.some(
    (name) =>
      AUTO_EXCLUDED_FIELDS.includes(name) ||
      CREDENTIAL_NAME_PATTERNS.some((pattern) => pattern.test(name)),
  )
}
