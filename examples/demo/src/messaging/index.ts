import type { Hono } from 'hono'
import type { Env, JobHandlers, KeyValueStore, Logger, Queue, Redactor } from 'kilnjs/core'
import type { PostgresDb } from 'kilnjs/db'
import {
  createMessagingClient,
  createMessagingEventBus,
  type IsOwner,
  loadMessagingConfig,
  type MessagingClient,
  type MessagingConfig,
  messagingJobHandlers,
} from 'kilnjs/messaging'
import { StoreDeliveryStatus, StoreInboundMessage } from './listeners.ts'
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
  /** Where the listeners store messages and statuses. */
  db: PostgresDb
}

export interface Messaging {
  config: MessagingConfig
  /** Mount with `app.route('/', messaging.routes)`: GET and POST /messaging/webhook. */
  routes: Hono
  /** Spread into the worker's handlers: `{ ...messaging.jobHandlers }`. */
  jobHandlers: JobHandlers
  /** `await messaging.client.send('12025550143', Text('Hello'))` */
  client: MessagingClient
}

/** Reads MSG_* (a clear error names the missing ones) and wires routes, listeners and jobs. */
export function initMessaging(options: MessagingOptions): Messaging {
  const { kv, queue, logger, redactor, isOwner, db } = options
  const config = loadMessagingConfig(options.env, { redactor })
  const bus = createMessagingEventBus({ store: kv, logger })
  bus.on('MessagingTextReceived', new StoreInboundMessage(db))
  bus.on('MessagingStatusUpdate', new StoreDeliveryStatus(db))
  return {
    config,
    routes: messagingRoutes({ config, queue, kv, logger, redactor }),
    jobHandlers: messagingJobHandlers({ bus, isOwner, logger }),
    client: createMessagingClient({ config, logger }),
  }
}
