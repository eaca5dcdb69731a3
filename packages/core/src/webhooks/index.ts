export {
  addWebhook,
  addWebhooks,
  listWebhooks,
  updateWebhook,
  removeWebhook,
  unsubscribeWebhook,
  subscribeWebhook,
  maskSecret,
  type WebhookFieldsInput,
  type WebhookSummary,
  type CreatedWebhook,
} from './api.js';
export {
  recordEvents,
  captureBefore,
  BeforeCapture,
  type RowChange,
  type BeforeRows,
  type RowValues,
  type OutboxEvent,
  type OutboxIds,
} from './events.js';
export {
  WebhookDelivery,
  startWebhookDelivery,
  attachWebhooks,
  type AttachedWebhooks,
  deliveryOptionsFromEnv,
  WebhookEventsDropped,
  clearWebhookQueue,
  webhookUsage,
  queueSize,
  signatureHeaders,
  type DeliveryOptions,
  type WebhookUsage,
  type WebhookStatus,
  type WebhookBatchStatus,
} from './delivery.js';
export {EVENT_TYPES, type EventType} from './meta.js';
export {dropPrivateTables, ensureWebhookTables, readsPrivateTables} from './schema.js';
export {
  webhookPolicyFromEnv,
  parseAllowList,
  checkWebhookUrl,
  classifyUrl,
  isPrivateAddress,
  type WebhookUrlPolicy,
  type LookupAll,
  type UrlClass,
} from './urls.js';
export {
  listTriggers,
  addTriggers,
  updateTriggers,
  removeTriggers,
  triggerMonitor,
  type TriggerInputFields,
  type TriggerRecord,
  type TriggerPendingRecord,
} from './triggers.js';
