import { EventBus, type ListenerFailure, ListenersFailedError } from '../core/events/event-bus.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import type { Logger } from '../core/logger.ts'
import type { JobHandler, JobHandlers } from '../core/queue/queue.ts'
import { UnrecoverableJobError } from '../core/queue/queue.ts'
import type { MessagingEvents } from './events.ts'
import type { IsOwner } from './identity.ts'
import { extractWebhookEvents } from './payload.ts'

/** The job the webhook queues for every accepted notification. */
export const PROCESS_MESSAGING_WEBHOOK = 'ProcessMessagingWebhook'

/** The payload of the `ProcessMessagingWebhook` job. */
export interface ProcessMessagingWebhookPayload {
  /** The webhook body exactly as received. */
  payload_json: string
}

/** Options of `messagingJobHandlers`. */
export interface MessagingJobOptions {
  /** Listeners are registered on it. Give it a store so retries skip listeners that succeeded. */
  bus: EventBus<MessagingEvents>
  isOwner: IsOwner
  logger?: Logger
}

/** Options of `createMessagingEventBus`. */
export interface MessagingEventBusOptions {
  /**
   * Remembers which listener handled which message, so a retried job (or a redelivered
   * notification) never runs a listener twice for one message. Redis for many workers.
   */
  store: KeyValueStore
  logger?: Logger
}

/**
 * The event bus messaging listeners register on.
 * @example
 * ```ts
 * const bus = createMessagingEventBus({ store: shared.kv, logger })
 * ```
 */
export function createMessagingEventBus(
  options: MessagingEventBusOptions,
): EventBus<MessagingEvents> {
  return new EventBus<MessagingEvents>({ store: options.store, logger: options.logger })
}

/**
 * The `ProcessMessagingWebhook` handler: parses the payload, classifies senders and emits
 * `MessagingTextReceived` / `MessagingStatusUpdate` for every message and status in it. Each
 * emission carries the message id, so a retry re-runs only the listeners that failed. When any
 * listener failed, it throws ListenersFailedError and the queue's retry policy applies.
 */
export function processMessagingWebhook(
  options: MessagingJobOptions,
): JobHandler<ProcessMessagingWebhookPayload> {
  const { bus, isOwner, logger } = options
  return async function processMessagingWebhookJob(payload, job) {
    if (typeof payload?.payload_json !== 'string') {
      throw new UnrecoverableJobError(`${PROCESS_MESSAGING_WEBHOOK}: payload_json is not a string`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(payload.payload_json)
    } catch {
      throw new UnrecoverableJobError(`${PROCESS_MESSAGING_WEBHOOK}: payload_json is not JSON`)
    }
    const events = extractWebhookEvents(parsed, { isOwner, logger })
    const failures: ListenerFailure[] = []
    for (const item of events) {
      const failed =
        item.type === 'MessagingTextReceived'
          ? await bus.emit(item.type, item.event, { id: item.id })
          : await bus.emit(item.type, item.event, { id: item.id })
      failures.push(...failed)
    }
    logger?.debug(
      { job: job.id, attempt: job.attempt, events: events.length },
      'messaging webhook processed',
    )
    if (failures.length > 0) {
      const types = [...new Set(events.map((e) => e.type))].join(', ')
      throw new ListenersFailedError(types, failures)
    }
  }
}

/**
 * `{ ProcessMessagingWebhook: handler }`, to spread into a worker's job handlers.
 * @example
 * ```ts
 * const bus = createMessagingEventBus({ store: shared.kv, logger })
 * queue.work(messagingJobHandlers({ bus, isOwner: staticOwners(['15551234567']), logger }))
 * ```
 */
export function messagingJobHandlers(options: MessagingJobOptions): JobHandlers {
  return { [PROCESS_MESSAGING_WEBHOOK]: processMessagingWebhook(options) }
}
