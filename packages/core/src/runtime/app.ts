import { EnvelopeCodec } from '../envelope/codec.js';
import { dlqName } from '../dead-letter/naming.js';
import type { JsonObject } from '../envelope/types.js';
import { resolveRetryBackoff } from '../retry/backoff.js';
import type { PolicyConfig, RetryBackoff } from '../settlement/policy-config.js';
import { isUnknownUrnStrategy, type UnknownUrnStrategyValue } from '../settlement/unknown-urn-strategy.js';
import type { Transport } from '../transport/transport.js';
import { processDelivery, type DropEvent, type FailedEvent, type ProcessorContext } from './delivery-processor.js';
import { CapabilityError, ConfigurationError } from './errors.js';
import { consoleLogger, type Logger } from './logger.js';
import type { Handler } from './message.js';

/** Dead-lettering settings: `true` for `<queue>.dlq`, or an explicit queue / suffix. */
export interface DeadLetterOptions {
  /** Write every record to this queue instead of `<queue><suffix>`. */
  readonly queue?: string;
  /** Suffix appended to the consumed queue's name. Default `.dlq` (`-dlq` on SQS). */
  readonly suffix?: string;
}

/** Options of {@link createApp}. */
export interface AppOptions {
  /** The broker binding. */
  readonly transport: Transport;
  /** The queue published to and consumed from when a call names none. Default `"default"`. */
  readonly queue?: string;
  /** Total deliveries a message gets, the first included; 1 = no retry; 0 = no cap. Default 3. */
  readonly maxAttempts?: number;
  /** The unknown-URN strategy. Default `fail`. */
  readonly onUnknownUrn?: UnknownUrnStrategyValue;
  /** Delay before an unknown URN under `release` is delivered again, in ms. Default 0. */
  readonly unknownUrnReleaseDelayMs?: number;
  /** Dead-lettering: off by default; `true` for `<queue>.dlq`; or `{ queue, suffix }`. */
  readonly deadLetter?: boolean | DeadLetterOptions;
  /** Retry delay `min(maxMs, baseMs * multiplier^(n-1))`; default 0 ms (redeliver at once). */
  readonly retryBackoff?: Partial<RetryBackoff>;
  /** A body larger than this many bytes is poison. Default: no limit. */
  readonly maxBodyBytes?: number;
  /** pino-compatible logger. Default: one line per event on stderr. Bodies are never logged. */
  readonly logger?: Logger;
  /** The `failed(...)` hook: runs when a message will not be retried again, before it is dead-lettered or dropped. */
  readonly onFailed?: (event: FailedEvent) => unknown;
  /** Called for every message acknowledged without a record (after the log line). */
  readonly onDrop?: (event: DropEvent) => unknown;
}

/** Options of {@link App.publish}. */
export interface PublishOptions {
  /** Target queue; default the App's queue. Stamped as `meta.queue`. */
  readonly queue?: string;
  /** Continue an existing trace (trimmed, reused verbatim); default a new UUID. */
  readonly traceId?: string;
  /** Deliver no earlier than this many ms from now. Refused by transports without delays. */
  readonly delayMs?: number;
  /** Out-of-band headers (traceparent, …) carried in native metadata, never in the body. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Kafka record key (carried byte-for-byte); ignored by other brokers. */
  readonly key?: Buffer | string | null;
}

/** Options of {@link App.run}. */
export interface RunOptions {
  /** Queue to consume; default the App's queue. */
  readonly queue?: string;
  /** Deliveries handled at once. Default 1. */
  readonly concurrency?: number;
  /** Aborting stops taking work, lets in-flight handlers finish and settle, then closes the transport. */
  readonly signal?: AbortSignal;
}

/** Options of {@link App.consume}. */
export interface ConsumeOnceOptions {
  readonly queue?: string;
  /** Stop after this many deliveries. */
  readonly maxMessages?: number;
  /** Stop once nothing arrived for this long. Default 1000 ms. */
  readonly idleMs?: number;
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
}

/** Registers handlers by URN, publishes envelopes and runs the consume loop on one transport. */
export interface App {
  /** Routes `urn` to `handler`. One handler per URN. */
  handle<TData = Record<string, unknown>>(urn: string, handler: Handler<TData>): App;
  /** Builds, encodes and publishes one envelope; resolves with its `meta.id` once the broker has it. */
  publish(urn: string, data: Record<string, unknown>, options?: PublishOptions): Promise<string>;
  /** Consumes until the signal aborts; then drains in-flight work and closes the transport. */
  run(options?: RunOptions): Promise<void>;
  /** Consumes until `maxMessages` or `idleMs` is reached (tests and scripts); returns deliveries handled. */
  consume(options?: ConsumeOnceOptions): Promise<number>;
  /** Closes the transport. */
  close(): Promise<void>;
  /** The DLQ name used for `queue` (or the App's queue), whether or not dead-lettering is on. */
  deadLetterQueueName(queue?: string): string;
}

/** Creates an {@link App}. Options are validated here, so a bad setting fails at start-up. */
export function createApp(options: AppOptions): App {
  const settings = validate(options);
  const { transport } = options;
  const handlers = new Map<string, Handler>();
  const defaultQueue = options.queue ?? 'default';

  const dlqFor = (queue: string, explicit: string | undefined, suffix: string | undefined): string =>
    explicit ?? (transport.rules.dlqName ? transport.rules.dlqName(queue, suffix) : dlqName(queue, { suffix }));

  const configs = new Map<string, PolicyConfig>();
  const config = (queue: string): PolicyConfig => {
    let found = configs.get(queue);
    if (found === undefined) {
      const dl = settings.deadLetter;
      found = {
        maxAttempts: settings.maxAttempts,
        onUnknownUrn: settings.onUnknownUrn,
        deadLetterQueue: dl === undefined ? undefined : dlqFor(queue, dl.queue, dl.suffix),
        defaultDeadLetterQueue: dlqFor(queue, undefined, undefined),
        retryBackoff: settings.retryBackoff,
        unknownUrnReleaseDelayMs: settings.unknownUrnReleaseDelayMs,
      };
      configs.set(queue, found);
    }
    return found;
  };

  const ctx: ProcessorContext = {
    transport,
    handlers,
    config,
    logger: settings.logger,
    maxBodyBytes: settings.maxBodyBytes,
    ...(options.onFailed ? { onFailed: options.onFailed } : {}),
    ...(options.onDrop ? { onDrop: options.onDrop } : {}),
  };
  const onDelivery = (delivery: Parameters<typeof processDelivery>[0]) => processDelivery(delivery, ctx);

  const app: App = {
    handle(urn, handler) {
      const key = urn.trim();
      if (key === '') throw new ConfigurationError('a handler needs a non-blank URN');
      if (handlers.has(key)) throw new ConfigurationError(`a handler is already registered for ${key}`);
      handlers.set(key, handler as Handler);
      return app;
    },

    async publish(urn, data, publishOptions = {}) {
      const queue = publishOptions.queue ?? defaultQueue;
      const delayMs = publishOptions.delayMs ?? 0;
      if (!(Number.isFinite(delayMs) && delayMs >= 0)) {
        throw new ConfigurationError(`delayMs must be a non-negative number, got ${String(delayMs)}`);
      }
      if (delayMs > 0 && !transport.capabilities.delayedPublish) {
        throw new CapabilityError(`the ${transport.rules.name} transport cannot delay a publish (delayMs=${delayMs})`);
      }
      const envelope = EnvelopeCodec.make(urn, data as JsonObject, {
        queue,
        ...(publishOptions.traceId !== undefined ? { traceId: publishOptions.traceId } : {}),
      });
      const key = publishOptions.key;
      await transport.publish({
        body: Buffer.from(EnvelopeCodec.encode(envelope), 'utf8'),
        queue,
        projection: {
          urn: envelope.job,
          traceId: envelope.trace_id,
          messageId: envelope.meta.id,
          schemaVersion: envelope.meta.schema_version,
          lang: envelope.meta.lang,
          createdAt: envelope.meta.created_at,
          attempts: envelope.attempts,
        },
        ...(delayMs > 0 ? { delayMs } : {}),
        ...(publishOptions.headers ? { headers: publishOptions.headers } : {}),
        ...(key === undefined ? {} : { key: typeof key === 'string' ? Buffer.from(key, 'utf8') : key }),
      });
      return envelope.meta.id;
    },

    async run(runOptions = {}) {
      const signal = runOptions.signal ?? new AbortController().signal;
      const queue = runOptions.queue ?? defaultQueue;
      settings.logger.info({ queue, binding: transport.rules.name, concurrency: runOptions.concurrency ?? 1 }, 'worker started');
      try {
        await transport.consume(queue, onDelivery, { concurrency: positive(runOptions.concurrency ?? 1), signal });
      } finally {
        await transport.close();
        settings.logger.info({ queue }, 'worker stopped');
      }
    },

    async consume(consumeOptions = {}) {
      let handled = 0;
      const counting = async (delivery: Parameters<typeof processDelivery>[0]) => {
        handled += 1;
        await onDelivery(delivery);
      };
      await transport.consume(consumeOptions.queue ?? defaultQueue, counting, {
        concurrency: positive(consumeOptions.concurrency ?? 1),
        signal: consumeOptions.signal ?? new AbortController().signal,
        idleMs: consumeOptions.idleMs ?? 1000,
        ...(consumeOptions.maxMessages !== undefined ? { maxMessages: consumeOptions.maxMessages } : {}),
      });
      return handled;
    },

    close: () => transport.close(),

    deadLetterQueueName(queue = defaultQueue) {
      return config(queue).deadLetterQueue ?? config(queue).defaultDeadLetterQueue;
    },
  };
  return app;
}

interface Settings {
  maxAttempts: number;
  onUnknownUrn: UnknownUrnStrategyValue;
  unknownUrnReleaseDelayMs: number;
  deadLetter: DeadLetterOptions | undefined;
  retryBackoff: RetryBackoff;
  maxBodyBytes: number;
  logger: Logger;
}

function validate(options: AppOptions): Settings {
  if (options.transport === undefined || options.transport === null) {
    throw new ConfigurationError('createApp needs a transport (for example new InMemoryTransport())');
  }
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 0) {
    throw new ConfigurationError(`maxAttempts must be an integer >= 0 (0 = no cap), got ${String(maxAttempts)}`);
  }
  const onUnknownUrn = options.onUnknownUrn ?? 'fail';
  if (!isUnknownUrnStrategy(onUnknownUrn)) {
    throw new ConfigurationError(`onUnknownUrn must be fail, delete, release or dead_letter, got ${String(onUnknownUrn)}`);
  }
  let retryBackoff: RetryBackoff;
  try {
    retryBackoff = resolveRetryBackoff(options.retryBackoff);
  } catch (error) {
    throw new ConfigurationError((error as Error).message);
  }
  const dl = options.deadLetter;
  return {
    maxAttempts,
    onUnknownUrn,
    unknownUrnReleaseDelayMs: nonNegative('unknownUrnReleaseDelayMs', options.unknownUrnReleaseDelayMs ?? 0),
    deadLetter: dl === undefined || dl === false ? undefined : dl === true ? {} : dl,
    retryBackoff,
    maxBodyBytes: options.maxBodyBytes === undefined ? Infinity : nonNegative('maxBodyBytes', options.maxBodyBytes),
    logger: options.logger ?? consoleLogger(),
  };
}

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new ConfigurationError(`${name} must be a number >= 0, got ${String(value)}`);
  }
  return value;
}

function positive(concurrency: number): number {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigurationError(`concurrency must be an integer >= 1, got ${String(concurrency)}`);
  }
  return concurrency;
}
