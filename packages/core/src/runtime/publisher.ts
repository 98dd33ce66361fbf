import { EnvelopeCodec } from '../envelope/codec.js';
import { InvalidMessageError } from '../envelope/errors.js';
import type { Envelope, JsonObject } from '../envelope/types.js';
import { failedOutcomes, publishOutcomes } from '../transport/publish-outcomes.js';
import type { OutgoingMessage, PublishOutcome, Transport } from '../transport/transport.js';
import { CapabilityError, ConfigurationError } from './errors.js';
import type { Instrumentation, PublishResult, PublishScope } from './instrumentation.js';
import type { Logger } from './logger.js';
import { checkOptionKeys } from './option-keys.js';
import { PublishManyError, type PublishManyResult } from './publish-many-error.js';
import { thrownFields } from './thrown.js';

/** Options of `App.publish` and `App.publishMany` (the latter applies them to every item). */
export interface PublishOptions {
  /** Target queue; default the App's queue. Stamped as `meta.queue`. */
  readonly queue?: string | undefined;
  /** Continue an existing trace (trimmed, reused verbatim); default a new UUID. */
  readonly traceId?: string | undefined;
  /** Deliver no earlier than this many ms from now. Refused by transports without delays. */
  readonly delayMs?: number | undefined;
  /** Out-of-band headers (traceparent, …) carried in native metadata, never in the body. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Ordering key: the Kafka record key (carried byte-for-byte), the SQS FIFO `MessageGroupId`; ignored by other brokers. */
  readonly key?: Buffer | string | null | undefined;
}

const PUBLISH_KEYS = ['queue', 'traceId', 'delayMs', 'headers', 'key'] as const;
/** The options of a call that passed none: nothing to check, no object per call. */
const NO_OPTIONS: PublishOptions = Object.freeze({});

/** What the publish side of an App needs. */
export interface PublisherSettings {
  readonly transport: Transport;
  readonly logger: Logger;
  /** The App's queue, used when the options name none. */
  readonly queue: string;
  readonly instrumentation?: Instrumentation | undefined;
}

/** One envelope ready to go, with the instrumentation scope that follows it. */
interface Prepared {
  readonly envelope: Envelope;
  readonly message: OutgoingMessage;
  readonly scope: PublishScope | undefined;
}

/**
 * The App's publish side: checks the options, builds one envelope per payload
 * and hands the bytes to the transport, one at a time or as a batch.
 */
export class Publisher {
  constructor(private readonly settings: PublisherSettings) {}

  /** One envelope; resolves with its `meta.id` once the broker has it. */
  async publish(urn: string, data: object, options: PublishOptions = NO_OPTIONS): Promise<string> {
    const { queue, delayMs } = this.check('publish options', options);
    if (this.settings.instrumentation?.publish === undefined) {
      const envelope = makeEnvelope(urn, data, queue, options.traceId);
      await this.settings.transport.publish(outgoing(envelope, queue, delayMs, options, options.headers));
      return envelope.meta.id;
    }
    const scope = this.scope(urn, queue, options);
    let envelope: Envelope | undefined;
    try {
      const prepared = this.prepare(urn, data, queue, delayMs, options, scope);
      envelope = prepared.envelope;
      await this.settings.transport.publish(prepared.message);
    } catch (error) {
      this.end(scope, envelope === undefined ? { error } : { envelope, error });
      throw error;
    }
    this.end(scope, { envelope });
    return envelope.meta.id;
  }

  /**
   * One envelope per payload, built and checked exactly as {@link publish}
   * builds them, then sent as one batch. A payload that cannot be an envelope
   * fails the call before anything is sent. Resolves with the `meta.id`s in
   * order once the broker has every message; if any message failed, rejects
   * with a {@link PublishManyError} that lists every item's outcome.
   */
  async publishMany(urn: string, items: readonly object[], options: PublishOptions = NO_OPTIONS): Promise<string[]> {
    const { queue, delayMs } = this.check('publishMany options', options);
    if (!Array.isArray(items)) {
      throw new ConfigurationError(`publishMany items must be an array of payloads, got ${items === null ? 'null' : typeof items}`);
    }
    const prepared = this.prepareAll(urn, items, queue, delayMs, options);
    if (prepared.length === 0) return [];
    const messages = prepared.map((p) => p.message);
    const outcomes = await this.send(messages);
    const ids = prepared.map((p) => p.envelope.meta.id);
    let failed = false;
    for (let index = 0; index < prepared.length; index += 1) {
      const outcome = outcomes[index];
      const error = outcome === undefined ? new Error('the transport reported no outcome for this message') : outcome.ok ? undefined : outcome.error;
      if (error !== undefined) failed = true;
      const { scope, envelope } = prepared[index]!;
      if (scope !== undefined) this.end(scope, error === undefined ? { envelope } : { envelope, error });
    }
    if (!failed) return ids;
    const results = ids.map((id, index): PublishManyResult => {
      const outcome = outcomes[index];
      if (outcome === undefined) return { ok: false, id, error: new Error('the transport reported no outcome for this message') };
      return outcome.ok ? { ok: true, id } : { ok: false, id, error: outcome.error };
    });
    throw new PublishManyError(urn, queue, results);
  }

  private async send(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    const { transport } = this.settings;
    try {
      if (transport.publishMany !== undefined) return await transport.publishMany(messages);
      return await publishOutcomes(messages, messages.map((message) => transport.publish(message)));
    } catch (error) {
      return failedOutcomes(messages, error);
    }
  }

  private prepareAll(urn: string, items: readonly object[], queue: string, delayMs: number, options: PublishOptions): Prepared[] {
    const prepared: Prepared[] = [];
    const instrumented = this.settings.instrumentation?.publish !== undefined;
    for (let index = 0; index < items.length; index += 1) {
      const scope = instrumented ? this.scope(urn, queue, options) : undefined;
      try {
        prepared.push(this.prepare(urn, items[index]!, queue, delayMs, options, scope));
      } catch (error) {
        const failure = error instanceof InvalidMessageError ? new InvalidMessageError(error.pointer, `${error.problem} (item ${index})`) : error;
        if (scope !== undefined) this.end(scope, { error: failure });
        for (const p of prepared) if (p.scope !== undefined) this.end(p.scope, { envelope: p.envelope, error: failure });
        throw failure;
      }
    }
    return prepared;
  }

  private prepare(urn: string, data: object, queue: string, delayMs: number, options: PublishOptions, scope: PublishScope | undefined): Prepared {
    if (scope === undefined) {
      const envelope = makeEnvelope(urn, data, queue, options.traceId);
      return { envelope, message: outgoing(envelope, queue, delayMs, options, options.headers), scope };
    }
    const envelope = makeEnvelope(urn, data, queue, options.traceId ?? scope.traceId);
    // The caller's own riders win a clash with the instrumentation's.
    const headers = scope.headers === undefined ? options.headers : { ...scope.headers, ...options.headers };
    return { envelope, message: outgoing(envelope, queue, delayMs, options, headers), scope };
  }

  private check(what: string, options: PublishOptions): { queue: string; delayMs: number } {
    if (options !== NO_OPTIONS) checkOptionKeys(what, options, PUBLISH_KEYS);
    const queue = options.queue ?? this.settings.queue;
    if (typeof queue !== 'string' || queue.trim() === '') {
      throw new ConfigurationError(`${what}.queue must be a non-blank string, got ${queue === null ? 'null' : typeof queue === 'string' ? '""' : typeof queue}`);
    }
    const delayMs = options.delayMs ?? 0;
    if (!(typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0)) {
      throw new ConfigurationError(`delayMs must be a non-negative number, got ${String(delayMs)}`);
    }
    const { transport } = this.settings;
    if (delayMs > 0 && !transport.capabilities.delayedPublish) {
      throw new CapabilityError(`the ${transport.rules.name} transport cannot delay a publish (delayMs=${delayMs})`);
    }
    return { queue, delayMs };
  }

  private scope(urn: string, queue: string, options: PublishOptions): PublishScope | undefined {
    try {
      return this.settings.instrumentation!.publish!({
        urn,
        queue,
        ...(options.traceId !== undefined ? { traceId: options.traceId } : {}),
        ...(options.headers !== undefined ? { headers: options.headers } : {}),
      });
    } catch (error) {
      this.settings.logger.error({ queue, urn, ...thrownFields(error) }, 'instrumentation threw at the start of a publish; ignored');
      return undefined;
    }
  }

  private end(scope: PublishScope | undefined, result: PublishResult): void {
    if (scope === undefined) return;
    try {
      scope.end(result);
    } catch (error) {
      this.settings.logger.error(thrownFields(error), 'instrumentation threw at the end of a publish; ignored');
    }
  }
}

function makeEnvelope(urn: string, data: object, queue: string, traceId: string | undefined): Envelope {
  return EnvelopeCodec.make(urn, data as JsonObject, traceId === undefined ? { queue } : { queue, traceId });
}

function outgoing(
  envelope: Envelope,
  queue: string,
  delayMs: number,
  options: PublishOptions,
  headers: Readonly<Record<string, string>> | undefined,
): OutgoingMessage {
  const message: Mutable<OutgoingMessage> = {
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
  };
  if (delayMs > 0) message.delayMs = delayMs;
  if (headers) message.headers = headers;
  const key = options.key;
  if (key !== undefined) message.key = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  return message;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
