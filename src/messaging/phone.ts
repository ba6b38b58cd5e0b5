/** E.164 without the leading `+`: a country code that does not start with 0, 7 to 15 digits in all. */
const E164_DIGITS = /^[1-9]\d{6,14}$/

/** True for a phone number written as the provider expects it: E.164 digits, no `+`. */
export function isE164WithoutPlus(phone: string): boolean {
  return E164_DIGITS.test(phone)
}

/**
 * Normalizes how people type numbers (`+1 202-555-0143`, `(202) 555 0143` with a country code)
 * into E.164 digits; undefined when the result is not a plausible number.
 */
export function normalizePhone(input: string): string | undefined {
  const digits = input
    .trim()
    .replace(/^\+/, '')
    .replace(/[\s().-]/g, '')
  return isE164WithoutPlus(digits) ? digits : undefined
}
