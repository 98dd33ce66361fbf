/**
 * `@babelqueue/core/binding`: what a binding author needs and application code
 * does not. The Transport contract, the settlement inputs (`BindingRules`,
 * capabilities), the native projections and attempts reconciliation of every
 * broker the spec names, and the mechanics every binding would otherwise write
 * again: the transport shell (assert open, track runs, close once), a
 * reconnecting connection, a push loop's stop and hand-over, settle-once
 * guards, holds before a requeue, reconnect back-off, connecting under a
 * deadline, reservation renewal, the pull loop, batches of one run of callbacks, publish-outcome helpers,
 * secret redaction, the transport registry, and the error family. Application
 * code imports from `@babelqueue/core`.
 */

// --- the contract ---
export type {
  BrowseOptions,
  ConnectOptions,
  ConsumeOptions,
  Delivery,
  EnvelopeProjection,
  HeaderValue,
  OutgoingMessage,
  PublishOutcome,
  RawPublishOptions,
  ScannedRecord,
  ScanOptions,
  Transport,
  TransportCapabilities,
} from './transport/transport.js';
export type { BindingRules } from './settlement/binding-rules.js';
export type { Decision, DeadLetterReason, RetryRule } from './settlement/decision.js';
export type { Logger } from './runtime/logger.js';
export { silentLogger } from './runtime/logger.js';
export { maskUrl, registerTransport } from './transport/registry.js';
export type { TransportFactory } from './transport/registry.js';

// --- the error family ---
export {
  BabelQueueError,
  CapabilityError,
  ConfigurationError,
  ConnectError,
  CountedReadError,
} from './runtime/errors.js';
export type { BabelQueueErrorOptions } from './runtime/errors.js';
export { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from './transport/errors.js';
export { DeadLetterWriteError } from './transport/transport.js';

// --- mechanics every binding needs ---
export { alreadySettled, SettleOnce } from './binding/settle-once.js';
export { Holds } from './binding/holds.js';
export { DrainLimits } from './binding/drain-limits.js';
export { LoopStop } from './binding/loop-stop.js';
export { HandOver } from './binding/hand-over.js';
export type { AbandonableDelivery, HandOverOptions } from './binding/hand-over.js';
export { TransportLifecycle } from './binding/lifecycle.js';
export { ReconnectingConnection } from './binding/reconnecting-connection.js';
export type { ReconnectingConnectionSettings } from './binding/reconnecting-connection.js';
export { maskUserInfo, redactCredentials, redactSecrets, urlSecret } from './binding/redact.js';
export { failedOutcomes, indexesByQueue, outcomesOf, publishOutcomes } from './transport/publish-outcomes.js';
export { pullLoop } from './transport/pull-loop.js';
export type { Fetch } from './transport/pull-loop.js';
export { connectWithin } from './transport/connect-within.js';
export type { ConnectAttempt } from './transport/connect-within.js';
export { DEFAULT_RECONNECT_BACKOFF, reconnectDelayMs, resolveReconnectBackoff } from './transport/reconnect-backoff.js';
export type { ReconnectBackoff, ResolvedReconnectBackoff } from './transport/reconnect-backoff.js';
export { pause } from './transport/pause.js';
export { coalesceWrites, writeInOnePass, type Corkable } from './binding/coalesce-writes.js';
export { TurnBatches } from './binding/turn-batches.js';
export type { TurnBatchLimits, Waiting } from './binding/turn-batches.js';
export { ReservationKeeper } from './transport/reservation-keeper.js';
export type { ReservationKeeperOptions } from './transport/reservation-keeper.js';

// --- the brokers' variants of the spec: projections, reconciliation, version gate, SQS's DLQ names ---
export { envelopeProjection } from './projection/source.js';
export { NO_PROJECTION, recordProjection } from './projection/record.js';
export type { ProjectionSource, Riders } from './projection/source.js';
export { projectRabbitMq } from './projection/rabbitmq.js';
export type { RabbitMqProjection } from './projection/rabbitmq.js';
export { projectSqs, SQS_MAX_ATTRIBUTES } from './projection/sqs.js';
export type { SqsAttribute } from './projection/sqs.js';
export { projectAsb } from './projection/asb.js';
export type { AsbProjection } from './projection/asb.js';
export { projectPulsar } from './projection/pulsar.js';
export { projectKafka } from './projection/kafka.js';
export type { KafkaProjection } from './projection/kafka.js';
export { projectArtemis } from './projection/artemis.js';
export type { ArtemisProjection } from './projection/artemis.js';
export { isVersionGated, nativeSchemaVersion } from './projection/version-gate.js';
export {
  bodyAttempts,
  reconcileArtemisAttempts,
  reconcileAsbAttempts,
  reconcileJmsAttempts,
  reconcileKafkaAttempts,
  reconcilePulsarAttempts,
  reconcileSqsAttempts,
  reconcileAttempts,
} from './retry/reconcile.js';
export type { BodyAttempts, KafkaHeaderValue, NativeCount } from './retry/reconcile.js';
// The spec's `<queue>.dlq` (`dlqName`, `DLQ_SUFFIX`) is the root entry's: applications name DLQs too.
export { sqsDlqName, SQS_DLQ_SUFFIX } from './dead-letter/naming.js';
export { decide } from './settlement/policy.js';
export type { PolicyInput } from './settlement/policy.js';
