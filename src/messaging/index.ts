import '../core/check-peers.ts'

export { isBsuid } from './bsuid.ts'
export {
  createMessagingClient,
  type MessagingClient,
  type MessagingClientOptions,
  type SendResult,
  type SendRetryOptions,
} from './client.ts'
export {
  DEFAULT_GRAPH_API_URL,
  GRAPH_API_VERSION,
  isMessagingConfigured,
  type LoadMessagingConfigOptions,
  loadMessagingConfig,
  MESSAGING_ENV_VARS,
  MessagingConfig,
  type MessagingConfigInput,
  messagingEnvSchema,
  messagingEnvStatus,
} from './config.ts'
export {
  DEDUP_TTL_MS,
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
  toDeliveryStatus,
} from './events.ts'
export {
  classifySender,
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
  processMessagingWebhook,
} from './job.ts'
export {
  buildSendRequest,
  currencyParameter,
  type OutboundMessage,
  Template,
  type TemplateMessage,
  type TemplateParameter,
  Text,
  type TextMessage,
  textParameter,
} from './message.ts'
export { dedupMessageIds, extractWebhookEvents, type WebhookEvent } from './payload.ts'
export { isE164WithoutPlus, normalizePhone } from './phone.ts'
export { SIGNATURE_HEADER, signWebhookBody, verifyWebhookSignature } from './signature.ts'
export {
  InvalidJsonError,
  InvalidSignatureError,
  type MessagingWebhookOptions,
  messagingWebhook,
  WEBHOOK_BODY_LIMIT,
  WebhookQueueError,
} from './webhook.ts'
