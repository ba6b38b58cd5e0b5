import { isBsuid } from './bsuid.ts'

/** A parameter of a template's body: typed text, currency, or any other component parameter. */
export type TemplateParameter =
  | { type: 'text'; text: string }
  | { type: 'currency'; currency: { fallback_value: string; code: string; amount_1000: number } }
  | { type: 'date_time'; date_time: { fallback_value: string } }
  | ({ type: string } & Record<string, unknown>)

/** A plain text message, from `Text`. */
export interface TextMessage {
  type: 'text'
  body: string
  /** Let the provider render a preview of the first URL in the body. Off by default. */
  previewUrl?: boolean
}

/** A message built from a provider-approved template. */
export interface TemplateMessage {
  type: 'template'
  /** The template's name; it must be approved by the provider. */
  name: string
  /** Language code of the approved translation, e.g. `en_US`. */
  language: string
  /** The body's parameters, in the order of the template's `{{1}}`, `{{2}}`, … */
  parameters: TemplateParameter[]
}

/** What `send()` sends. New kinds may be added as new variants. */
export type OutboundMessage = TextMessage | TemplateMessage

/** A plain text message. */
export function Text(body: string, options: { previewUrl?: boolean } = {}): TextMessage {
  return { type: 'text', body, ...options }
}

/** A template message: required for contacts who have not written in the last 24 hours. */
export function Template(
  name: string,
  language: string,
  parameters: TemplateParameter[] = [],
): TemplateMessage {
  return { type: 'template', name, language, parameters }
}

/** A text parameter of a template message. */
export function textParameter(text: string): TemplateParameter {
  return { type: 'text', text }
}

/** An amount in a currency; `amount1000` is the amount times 1000 (100.99 USD → 100990). */
export function currencyParameter(options: {
  fallbackValue: string
  code: string
  amount1000: number
}): TemplateParameter {
  return {
    type: 'currency',
    currency: {
      fallback_value: options.fallbackValue,
      code: options.code,
      amount_1000: options.amount1000,
    },
  }
}

/**
 * The Graph API body for sending `message` to `to`: a phone number (E.164 without `+`) goes in
 * the `to` field, a BSUID or parent BSUID in the `recipient` field (the provider reads `to`
 * first when both are set, so kiln sets exactly one).
 */
export function buildSendRequest(to: string, message: OutboundMessage): Record<string, unknown> {
  const base = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    ...(isBsuid(to) ? { recipient: to } : { to }),
  }
  if (message.type === 'text') {
    return {
      ...base,
      type: 'text',
      text: { preview_url: message.previewUrl ?? false, body: message.body },
    }
  }
  const template: Record<string, unknown> = {
    name: message.name,
    language: { code: message.language },
  }
  if (message.parameters.length > 0) {
    template.components = [{ type: 'body', parameters: message.parameters }]
  }
  return { ...base, type: 'template', template }
}
