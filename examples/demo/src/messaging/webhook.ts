import type { Hono } from 'hono'
import type { KeyValueStore, Logger, Queue, Redactor } from 'kilnjs/core'
import { type MessagingConfig, messagingWebhook, QueueDeduplicationStore } from 'kilnjs/messaging'

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
    // Dedup kept by the queue: marking a message and queuing it are one step (one round trip).
    dedup: new QueueDeduplicationStore(options.queue),
    logger: options.logger,
    redactor: options.redactor,
  })
}
