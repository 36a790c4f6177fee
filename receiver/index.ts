/**
 * Receiver kit for this service's webhooks (Standard Webhooks, envelope version 1).
 * See docs/receivers.md; examples/receiver.ts is a complete receiver.
 */
export { verify, headerValue, DEFAULT_TOLERANCE_SECONDS } from './verify'
export type { HeadersLike, RawBody, Verified, VerifyOptions } from './verify'
export { parse } from './parse'
export { createReceiver } from './receiver'
export type { DeliveryContext, ReceivedRequest, ReceiverAnswer, ReceiverOptions, WebhookReceiver } from './receiver'
export { RetryLater, retryLater } from './retry-after'
export { WebhookVerificationError, WebhookParseError, ReceiverConfigError } from './errors'
export type { VerificationCode } from './errors'
export type { DedupeStore } from './stores/store'
export { MemoryStore } from './stores/memory'
export type { MemoryStoreOptions } from './stores/memory'
export { RedisStore } from './stores/redis'
export type { RedisStoreOptions } from './stores/redis'
export { toNodeListener } from './adapters/node'
export { toFetchHandler } from './adapters/fetch'
export { toH3Handler } from './adapters/h3'
export type { AdapterOptions } from './adapters/limits'
export type * from './events.generated'
