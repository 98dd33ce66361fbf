export const VERSION = '0.1.0';

// --- runtime, settlement policy and transports (the App) ---
export { createApp } from './runtime/app.js';
export type {
  App,
  AppHealth,
  AppOptions,
  CatalogData,
  ConsumeOnceOptions,
  DeadLetterOptions,
  HealthOptions,
  ProcessOptions,
  PublishOptions,
  RunOptions,
  UntypedCatalog,
  UrnOf,
} from './runtime/app.js';
export { closestName } from './runtime/option-keys.js';
export { healthOf, RunHealth } from './runtime/health.js';
export { serveHealth } from './runtime/health-server.js';
export type { HealthServer } from './runtime/health-server.js';
export { PublishManyError } from './runtime/publish-many-error.js';
export type { PublishManyResult } from './runtime/publish-many-error.js';
export type { DropEvent, FailedEvent } from './runtime/delivery-processor.js';
export type { Handler, Message, UrnCatalog } from './runtime/message.js';
export type {
  DeliveryEnd,
  DeliveryScope,
  DeliveryStart,
  Instrumentation,
  PublishResult,
  PublishScope,
  PublishStart,
} from './runtime/instrumentation.js';
export { consoleLogger, silentLogger } from './runtime/logger.js';
export type { Logger } from './runtime/logger.js';
export {
  BabelQueueError,
  CapabilityError,
  ConfigurationError,
  ConnectError,
  CountedReadError,
  HandlerTimeoutError,
  ShutdownError,
  UnrecoverableError,
} from './runtime/errors.js';
export { UnknownUrnStrategy, isUnknownUrnStrategy } from './settlement/unknown-urn-strategy.js';
export type { UnknownUrnStrategyValue } from './settlement/unknown-urn-strategy.js';
export type { PolicyConfig, RetryBackoff } from './settlement/policy-config.js';
export type { Outcome } from './settlement/outcome.js';
export type { Verdict } from './settlement/verdict.js';
export type { Decision, DeadLetterReason, RetryRule } from './settlement/decision.js';
export { DeadLetterWriteError } from './transport/transport.js';
export { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from './transport/errors.js';
export type { BabelQueueErrorOptions } from './runtime/errors.js';
export type {
  BrowseOptions,
  ConnectOptions,
  ConsumeOptions,
  HeaderValue,
  OutgoingMessage,
  PublishOutcome,
  ScannedRecord,
  ScanOptions,
  ScanKind,
  Transport,
  TransportCapabilities,
} from './transport/transport.js';
export { DEFAULT_RECONNECT_BACKOFF, reconnectDelayMs, resolveReconnectBackoff } from './transport/reconnect-backoff.js';
export type { ReconnectBackoff, ResolvedReconnectBackoff } from './transport/reconnect-backoff.js';
export { pause } from './transport/pause.js';
export { InMemoryTransport } from './transport/memory/in-memory-transport.js';
export { maskUrl, transportFromUrl } from './transport/registry.js';
export type { InMemoryTransportOptions } from './transport/memory/in-memory-transport.js';
export { MemoryBroker } from './transport/memory/memory-broker.js';
export type { StoredMessage } from './transport/memory/memory-broker.js';

// --- envelope codec, validation, dead-letter records, lossless re-emit, retry, projections ---
export { EnvelopeCodec } from './envelope/codec.js';
export { makeEnvelope, DEFAULT_QUEUE } from './envelope/make.js';
export type { MakeOptions } from './envelope/make.js';
export { encodeEnvelope, encodeDeadLetter } from './envelope/encode.js';
export { decodeEnvelope, FORBIDDEN_TOP_LEVEL_KEYS, FORBIDDEN_META_KEYS } from './envelope/decode.js';
export { resolveUrn, acceptsEnvelope } from './envelope/identity.js';
export { setWarningHandler } from './envelope/warnings.js';
export { EnvelopeValidator } from './envelope/validator.js';
export type { EnvelopeRejectionReason, EnvelopeValidatorApi } from './envelope/validator.js';
export { InvalidEnvelopeError, InvalidMessageError, NotAJsonObjectError } from './envelope/errors.js';
export { isValidUtf8, decodeUtf8Strict } from './envelope/utf8.js';
export type {
  DeadLetterBlock,
  DecodedEnvelope,
  Envelope,
  EnvelopeMeta,
  JsonObject,
  JsonValue,
  WarningHandler,
} from './envelope/types.js';
export { annotate } from './dead-letter/annotate.js';
export type { AnnotateOptions } from './dead-letter/annotate.js';
export { deadLetterBlock, describeError, DEAD_LETTER_REASONS } from './dead-letter/block.js';
export type { DeadLetterBlockInput } from './dead-letter/block.js';
export { poisonRecord } from './dead-letter/poison.js';
export type { PoisonRecordOptions } from './dead-letter/poison.js';
export { dlqName, DLQ_SUFFIX } from './dead-letter/naming.js';
export { CannotReadError, deadLetterReader } from './dead-letter/reader.js';
export type { DeadLetterListing, DeadLetterReader, DeadLetterReaderOptions, DeadLetterReadMode } from './dead-letter/reader.js';
export type { DlqNameOptions } from './dead-letter/naming.js';
export { reemit, withAttempts, withDeadLetter, withoutDeadLetter } from './reemit/edit.js';
export type { ReemitEdits } from './reemit/edit.js';
export { DEFAULT_RETRY_BACKOFF, resolveRetryBackoff, retryDelayMs } from './retry/backoff.js';
export { SchemaValidator, SchemaViolationError } from './schema/schema-validator.js';
export type { SchemaValidatorApi, SchemaViolation, SchemaViolationReason } from './schema/schema-validator.js';
export { idempotent, MemoryIdempotencyStore } from './idempotency/idempotent.js';
export type { IdempotencyStore, IdentifiedMessage } from './idempotency/idempotent.js';

// --- DLQ redrive and replay bypass (ADR-0026, ADR-0027) ---
export { isVersionGatedRecord, redrive, REDRIVE_BATCH_CEILING } from './redrive/redrive.js';
export type { RedriveItem, RedriveOptions, RedriveResult } from './redrive/redrive.js';
export { drainQueue } from './redrive/drain.js';
export type { DrainOptions } from './redrive/drain.js';
export { bypassExternalEffects, isReplay, REPLAY_BYPASS_HEADER } from './redrive/replay.js';
