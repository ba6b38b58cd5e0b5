/**
 * The files `kilnjs make:messaging` writes. They import kiln's public subpaths only and read
 * like hand-written code: the app owns them from then on.
 */
export interface MessagingScaffoldFile {
  /** Relative to the scaffold folder. */
  path: string
  contents: string
}

/** `index.ts`: the init function — configuration, webhook routes, listener registration. */
export const initTemplate = `import type { Hono } from 'hono'
import type { Env, JobHandlers, KeyValueStore, Logger, Queue, Redactor } from 'kilnjs/core'
import {
  createMessagingClient,
  createMessagingEventBus,
  type IsOwner,
  loadMessagingConfig,
  type MessagingClient,
  type MessagingConfig,
  messagingJobHandlers,
} from 'kilnjs/messaging'
import { StatusUpdateListener, TextReceivedListener } from './listeners.ts'
import { messagingRoutes } from './webhook.ts'

export interface MessagingOptions {
  env: Env
  /** Shared state: dedup marks and which listener handled which message (Redis with REDIS_URL). */
  kv: KeyValueStore
  queue: Queue
  logger: Logger
  redactor?: Redactor
  /** Synchronous: use createOwnerDirectory() for a list kept in the database. */
  isOwner: IsOwner
}

export interface Messaging {
  config: MessagingConfig
  /** Mount with \`app.route('/', messaging.routes)\`: GET and POST /messaging/webhook. */
  routes: Hono
  /** Spread into the worker's handlers: \`{ ...messaging.jobHandlers }\`. */
  jobHandlers: JobHandlers
  /** \`await messaging.client.send('12025550143', Text('Hello'))\` */
  client: MessagingClient
}

/** Reads MSG_* (a clear error names the missing ones) and wires routes, listeners and jobs. */
export function initMessaging(options: MessagingOptions): Messaging {
  const { kv, queue, logger, redactor, isOwner } = options
  const config = loadMessagingConfig(options.env, { redactor })
  const bus = createMessagingEventBus({ store: kv, logger })
  bus.on('MessagingTextReceived', new TextReceivedListener(logger))
  bus.on('MessagingStatusUpdate', new StatusUpdateListener(logger))
  return {
    config,
    routes: messagingRoutes({ config, queue, kv, logger, redactor }),
    jobHandlers: messagingJobHandlers({ bus, isOwner, logger }),
    client: createMessagingClient({ config, logger }),
  }
}
`

/** `webhook.ts`: the provider's webhook, with signature check and Redis-ready dedup. */
export const webhookTemplate = `import type { Hono } from 'hono'
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
`

/** `listeners.ts`: one listener per event type. */
export const listenersTemplate = `import type { Listener, Logger } from 'kilnjs/core'
import type { MessagingStatusUpdate, MessagingTextReceived } from 'kilnjs/messaging'

/**
 * Runs once per inbound text message, after the sender is known to be an Owner or a Customer.
 * Throwing makes the job retry this listener (and only this one) later.
 */
export class TextReceivedListener implements Listener<MessagingTextReceived> {
  constructor(private readonly logger: Logger) {}

  async handle(event: MessagingTextReceived): Promise<void> {
    this.logger.info(
      { wamid: event.wamid, sender: event.sender_identity.kind, at: event.timestamp.toISOString() },
      'text message received',
    )
  }
}

/** Runs once per delivery status (Sent, Delivered, Read, Failed) of a message you sent. */
export class StatusUpdateListener implements Listener<MessagingStatusUpdate> {
  constructor(private readonly logger: Logger) {}

  async handle(event: MessagingStatusUpdate): Promise<void> {
    this.logger.info(
      { wamid: event.wamid, status: event.status, errors: event.errors.map((e) => e.code) },
      'message status updated',
    )
  }
}
`

export function messagingScaffoldFiles(): MessagingScaffoldFile[] {
  return [
    { path: 'index.ts', contents: initTemplate },
    { path: 'webhook.ts', contents: webhookTemplate },
    { path: 'listeners.ts', contents: listenersTemplate },
  ]
}
