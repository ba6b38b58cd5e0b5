/**
 * Fails the test file on a deprecation warning that is not kiln's own: Node's and the
 * dependencies' deprecations (pg's overlapping queries, a Node API on its way out) are errors
 * in the tests, as `--throw-deprecation` would make them, while kiln's deliberate ones (legacy
 * variables, code `KILN_…`) still reach the tests that check them.
 */
export function failOnDeprecation(warning: Error & { code?: string }): void {
  if (warning.name !== 'DeprecationWarning' || warning.code?.startsWith('KILN_')) return
  throw warning
}

process.on('warning', failOnDeprecation)
