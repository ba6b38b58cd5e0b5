import '../core/check-peers.ts'

export {
  createMessagingClient,
  type MessagingClient,
  type MessagingClientOptions,
  type SendResult,
  type SendRetryOptions,
} from './client.ts'
export {
  isMessagingConfigured,
  type LoadMessagingConfigOptions,
  loadMessagingConfig,
  MESSAGING_ENV_VARS,
  MessagingConfig,
  type MessagingConfigInput,
  messagingEnvStatus,
} from './config.ts'
export {
  type DeduplicationStore,
  KeyValueDeduplicationStore,
  type KeyValueDeduplicationStoreOptions,
  MemoryDeduplicationStore,
  type MemoryDeduplicationStoreOptions,
  QueueDeduplicationStore,
  type QueueDeduplicationStoreOptions,
} from './dedup.ts'
export {
  AccessTokenExpiredError,
  MessagingApiError,
  MessagingError,
  MessagingThrottledError,
  MessagingTimeoutError,
  type ProviderErrorFields,
  ReengagementRequiredError,
} from './errors.ts'
export {
  Customer,
  type DeliveryStatus,
  laterStatus,
  type MessagingEvents,
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  Owner,
  replyAddress,
  type SenderIdentity,
  type SenderKeys,
  type StatusError,
} from './events.ts'
export {
  createOwnerDirectory,
  type IsOwner,
  type OwnerDirectory,
  type OwnerDirectoryOptions,
  type SenderIds,
  staticOwners,
} from './identity.ts'
export {
  createMessagingEventBus,
  type MessagingEventBusOptions,
  type MessagingJobOptions,
  messagingJobHandlers,
  PROCESS_MESSAGING_WEBHOOK,
  type ProcessMessagingWebhookPayload,
} from './job.ts'
export {
  currencyParameter,
  type OutboundMessage,
  Template,
  type TemplateMessage,
  type TemplateParameter,
  Text,
  type TextMessage,
  textParameter,
} from './message.ts'
export type { WebhookEvent } from './payload.ts'
export { normalizePhone } from './phone.ts'
export {
  InvalidJsonError,
  InvalidSignatureError,
  type MessagingWebhookOptions,
  messagingWebhook,
  WebhookQueueError,
} from './webhook.ts'
