import type { Listener, Logger } from 'kilnjs/core'
import {
  type MessagingClient,
  type MessagingTextReceived,
  replyAddress,
  Text,
} from 'kilnjs/messaging'

/**
 * Answers customers' texts with an acknowledgement and leaves owners' messages alone. The reply
 * falls inside the 24-hour window the customer's message opened, so a free-form text is
 * allowed. It goes to the phone number, or to the BSUID of a user who hides the number.
 * Register it with `bus.on('MessagingTextReceived', new AutoReplyListener(client, logger))`.
 */
export class AutoReplyListener implements Listener<MessagingTextReceived> {
  constructor(
    private readonly client: MessagingClient,
    private readonly logger: Logger,
  ) {}

  async handle(event: MessagingTextReceived): Promise<void> {
    if (event.sender_identity.kind !== 'Customer') return
    const result = await this.client.send(
      replyAddress(event.sender_identity),
      Text('Thanks for your message! We will get back to you shortly.'),
    )
    this.logger.info({ inReplyTo: event.wamid, wamid: result.wamid }, 'auto-reply sent')
  }
}
