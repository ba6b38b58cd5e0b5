import {
  currencyParameter,
  type MessagingClient,
  ReengagementRequiredError,
  type SendResult,
  Template,
  textParameter,
} from 'kilnjs/messaging'

/**
 * Sends the approved `order_confirmation` template (a name and an amount) to a customer. Use a
 * template whenever the customer has not written within the last 24 hours; a free-form text
 * would be refused with ReengagementRequiredError.
 */
export async function sendOrderConfirmation(
  client: MessagingClient,
  phone: string,
  order: { customerName: string; totalCents: number; currency: string },
): Promise<SendResult> {
  try {
    return await client.send(
      phone,
      Template('order_confirmation', 'en_US', [
        textParameter(order.customerName),
        currencyParameter({
          fallbackValue: `${(order.totalCents / 100).toFixed(2)} ${order.currency}`,
          code: order.currency,
          amount1000: order.totalCents * 10,
        }),
      ]),
    )
  } catch (error) {
    if (error instanceof ReengagementRequiredError) {
      throw new Error(`The ${phone} conversation window is closed: send an approved template`, {
        cause: error,
      })
    }
    throw error
  }
}
