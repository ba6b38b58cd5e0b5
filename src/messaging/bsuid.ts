/**
 * A business-scoped user id (BSUID): the provider's id for one WhatsApp user within one
 * business portfolio, e.g. `US.13491208655302741918`. Two ISO 3166 letters, a period, and up to
 * 128 letters and digits; a parent BSUID, shared by the portfolios of a managed business,
 * carries `ENT.` after the country (`US.ENT.11815799212886844830`).
 */
const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/

/** True for a business-scoped user id or a parent BSUID, as the provider writes them. */
export function isBsuid(value: string): boolean {
  return BSUID.test(value)
}
