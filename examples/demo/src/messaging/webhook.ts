import type { Hono } from 'hono'
import type { KeyValueStore, Logger, Queue, Redactor } from 'kiln/core'
import { KeyValueDeduplicationStore, type MessagingConfig, messagingWebhook } from 'kiln/messaging'

export interface MessagingRoutesOptions {
  config: MessagingConfig
  queue: Queue
  kv: KeyValueStore
  logger: Logger
  redactor?: Redactor
}

/**
 * GET /messaging/webhook answers the provider's verification; POST checks the signature,
 * drops redelivered messages and queues ProcessMessagingWebhook.
 */
export function messagingRoutes(options: MessagingRoutesOptions): Hono {
  return messagingWebhook({
    config: options.config,
    queue: options.queue,
    dedup: new KeyValueDeduplicationStore(options.kv),
    logger: options.logger,
    redactor: options.redactor,
  })
}
