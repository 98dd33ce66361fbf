import { BQ_CONTRACT_KEYS } from '../../projection/bq-strings.js';
import { projectPulsar } from '../../projection/pulsar.js';
import { recordProjection } from '../../projection/record.js';
import { nativeSchemaVersion } from '../../projection/version-gate.js';
import { withAttempts } from '../../reemit/edit.js';
import type { BindingRules } from '../../settlement/binding-rules.js';
import type { Decision } from '../../settlement/decision.js';
import { ReservationKeeper } from '../reservation-keeper.js';
import { pullLoop } from '../pull-loop.js';
import {
  DeadLetterWriteError,
  type ConsumeOptions,
  type Delivery,
  type HeaderValue,
  type OutgoingMessage,
  type PublishOutcome,
  type RawPublishOptions,
  type ScannedRecord,
  type ScanOptions,
  type Transport,
  type TransportCapabilities,
  TransportClosedError,
} from '../transport.js';
import { MemoryBroker, type StoredMessage } from './memory-broker.js';

/** Options of {@link InMemoryTransport}. */
export interface InMemoryTransportOptions {
  /** Share one broker between several transports (producer and consumer apps in one test). */
  broker?: MemoryBroker;
  /** How long a delivery stays leased before it returns to the queue unacknowledged. Default 30 s. */
  visibilityTimeoutMs?: number;
  /** Delay before an unsettled delivery is offered again. Default 100 ms. */
  redeliveryDelayMs?: number;
  /**
   * Fault injection: called before every write (publish, retry copy, dead-letter
   * record); throw to make the broker refuse it.
   */
  beforeWrite?: (queue: string, body: Buffer) => void;
}

/** Records {@link InMemoryTransport.scan} copies out of the broker at a time. */
const SCAN_BATCH = 500;

const RULES: BindingRules = {
  name: 'memory',
  poisonWithoutDeadLetter: 'drop',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'drop',
  attempts: { kind: 'max', native: 'redeliveries', offset: 0 },
};

/**
 * An in-process broker that behaves like a real one: FIFO queues, delayed
 * delivery, string headers (the Pulsar-style `bq-` projection, so the version
 * gate works), leases that expire, and a native redelivery count reconciled as
 * `max(body.attempts, redeliveries)`. Retries re-publish the body with the new
 * attempts (byte-preserving) and acknowledge the original. The default for
 * `npm run demo` and for users' own tests.
 */
export class InMemoryTransport implements Transport {
  readonly rules = RULES;
  readonly capabilities: TransportCapabilities = { delayedPublish: true, delayedRetry: true, retry: true, headers: true };
  readonly target = 'memory://';
  /** The storage, for inspection in tests. */
  readonly broker: MemoryBroker;
  private readonly visibilityTimeoutMs: number;
  private readonly redeliveryDelayMs: number;
  private readonly beforeWrite: ((queue: string, body: Buffer) => void) | undefined;
  /** Aborted by `close()`: running consume loops stop, and the transport stays closed. */
  private readonly closing = new AbortController();

  constructor(options: InMemoryTransportOptions = {}) {
    this.broker = options.broker ?? new MemoryBroker();
    this.visibilityTimeoutMs = options.visibilityTimeoutMs ?? 30_000;
    this.redeliveryDelayMs = options.redeliveryDelayMs ?? 100;
    this.beforeWrite = options.beforeWrite;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    this.assertOpen();
    const headers = projectPulsar(message.projection, message.headers);
    this.write(message.queue, message.body, headers, message.key ?? null, message.delayMs ?? 0);
  }

  /** Writes each message as {@link publish} does; one the `beforeWrite` fault refuses fails alone. */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.assertOpen();
    return messages.map((message) => {
      const messageId = message.projection.messageId;
      try {
        this.write(message.queue, message.body, projectPulsar(message.projection, message.headers), message.key ?? null, message.delayMs ?? 0);
        return { ok: true, messageId };
      } catch (error) {
        return { ok: false, messageId, error: error instanceof Error ? error : new Error(String(error)) };
      }
    });
  }

  async publishRaw(
    queue: string,
    body: Buffer,
    headers: Readonly<Record<string, string>> = {},
    options: RawPublishOptions = {},
  ): Promise<void> {
    this.assertOpen();
    this.write(queue, body, headers, options.key ?? null, 0);
  }

  /** Nothing to reach: an in-process broker is always there. */
  async connect(): Promise<void> {}

  /** Always true: an in-process broker cannot be out of reach. */
  get connected(): boolean {
    return true;
  }

  /** The ready messages (as {@link depth}): delayed and leased ones are not ready. */
  readyCount(queue: string): Promise<number> {
    return this.depth(queue);
  }

  /** The visibility timeout: a lease lasts that long and is renewed while its handler runs. */
  reservationMs(): number {
    return this.visibilityTimeoutMs;
  }

  /** The bodies of a queue's ready messages, oldest first. */
  messages(queue: string): Buffer[] {
    return this.broker.ready(queue).map((m) => m.body);
  }

  async browse(queue: string, max: number): Promise<Buffer[]> {
    return this.messages(queue).slice(0, max);
  }

  async purge(queue: string): Promise<number> {
    return this.broker.purge(queue);
  }

  /** The ready messages from `offset` on, read in batches of {@link SCAN_BATCH}; delayed and leased ones are not waiting. */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    let index = options.offset ?? 0;
    for (;;) {
      const batch = this.broker.readySlice(queue, index, SCAN_BATCH);
      for (const message of batch) {
        if (options.signal?.aborted) return;
        yield { body: message.body, headers: message.headers, key: message.key, index: index++ };
      }
      if (batch.length < SCAN_BATCH) return;
    }
  }

  async depth(queue: string): Promise<number> {
    return this.broker.stats(queue).ready;
  }

  /** The queues the in-memory broker has seen. */
  async listQueues(): Promise<string[]> {
    return this.broker.queueNames();
  }

  async remove(queue: string, body: Buffer): Promise<boolean> {
    return this.broker.removeReady(queue, body);
  }

  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.assertOpen();
    // Leases are renewed while this loop runs; a delivery left unsettled after it ends expires.
    const keeper = new ReservationKeeper({
      reservationMs: this.visibilityTimeoutMs,
      onTrouble: () => undefined, // an in-process lease can only lapse if the event loop stalls
    });
    const leases: Leases = {
      renew: (leaseId) => this.broker.extend(queue, leaseId, this.visibilityTimeoutMs),
      settle: (leaseId, message, decision) => this.settle(queue, leaseId, message, decision),
    };
    try {
      await pullLoop(async (max, waitMs, signal) => {
        let taken = this.broker.take(queue, max, this.visibilityTimeoutMs);
        if (taken.length === 0 && waitMs > 0) {
          await this.broker.waitFor(queue, waitMs, signal);
          if (signal.aborted) return [];
          taken = this.broker.take(queue, max, this.visibilityTimeoutMs);
        }
        return taken.map(({ leaseId, message }) => new MemoryDelivery(leases, queue, leaseId, message, keeper));
      }, onDelivery, { ...options, signal: AbortSignal.any([options.signal, this.closing.signal]) });
    } finally {
      keeper.close();
    }
  }

  /** Stops running consume loops; the broker lives on as long as its owner keeps it (a new transport on it starts again). */
  async close(): Promise<void> {
    this.closing.abort();
  }

  private assertOpen(): void {
    if (this.closing.signal.aborted) throw new TransportClosedError('memory');
  }

  private write(queue: string, body: Buffer, headers: Readonly<Record<string, HeaderValue>>, key: Buffer | null, delayMs: number) {
    this.beforeWrite?.(queue, body);
    this.broker.push(queue, { body, headers, key, redeliveries: 0 }, delayMs);
  }

  private async settle(queue: string, leaseId: number, message: StoredMessage, decision: Decision): Promise<void> {
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.broker.ack(queue, leaseId);
        return;
      case 'retry': {
        const body = withAttempts(message.body, decision.attempts);
        this.write(queue, body, copyHeaders(message.headers, body), message.key, decision.delayMs);
        this.broker.ack(queue, leaseId);
        return;
      }
      case 'dead-letter':
        try {
          const headers = decision.reason === 'version_gate'
            ? versionGatedHeaders(message.headers)
            : copyHeaders(message.headers, decision.record);
          this.write(decision.queue, decision.record, headers, message.key, 0);
        } catch (cause) {
          throw new DeadLetterWriteError(decision.queue, { cause });
        }
        this.broker.ack(queue, leaseId);
        return;
      case 'unsettled':
      case 'native-dead-letter':
        this.broker.release(queue, leaseId, this.redeliveryDelayMs);
        return;
    }
  }
}

/** What the deliveries of one consume loop do to their leases, on that loop's queue. */
interface Leases {
  /** Pushes a lease's deadline out; false when it is gone. */
  renew(leaseId: number): boolean;
  settle(leaseId: number, message: StoredMessage, decision: Decision): Promise<void>;
}

/** One leased message handed to the consume loop: a class, so a delivery costs one object, not a set of closures. */
class MemoryDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly key: Buffer | null;
  readonly nativeSchemaVersion: string | undefined;
  /** Redeliveries when it was taken: later expiries do not change this delivery's count. */
  /** How often the broker handed this message out before (0-based); reconciled as `max(body, redeliveries)`. */
  readonly nativeAttempts: number;
  private readonly release: () => void;

  constructor(
    private readonly leases: Leases,
    readonly queue: string,
    private readonly leaseId: number,
    private readonly message: StoredMessage,
    keeper: ReservationKeeper,
  ) {
    this.body = message.body;
    this.headers = message.headers;
    this.key = message.key;
    this.nativeSchemaVersion = nativeSchemaVersion(message.headers['bq-schema-version']);
    this.nativeAttempts = message.redeliveries;
    this.release = keeper.hold(async () => leases.renew(leaseId));
    // Own, bound functions, as a plain delivery object has: they keep working
    // when taken off the delivery (`{ ...delivery }`, `const { settle } = delivery`).
    this.settle = this.settle.bind(this);
  }

  settle(decision: Decision): Promise<void> {
    this.release();
    return this.leases.settle(this.leaseId, this.message, decision);
  }
}

/**
 * The headers of a retry copy or a failed / unknown-URN / poison record: the
 * `bq-` projection of the record itself (its counted attempts; nothing for a
 * record that is not an envelope), plus the delivery's riders.
 */
function copyHeaders(headers: Readonly<Record<string, HeaderValue>>, record: Buffer): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  for (const [key, value] of Object.entries(headers)) if (!Object.hasOwn(BQ_CONTRACT_KEYS, key)) out[key] = value;
  return Object.assign(out, projectPulsar(recordProjection(record)));
}

/**
 * A version-gated record is the raw body, never decoded: it keeps the
 * delivery's routing headers but not the attempts / version projection (the
 * Pulsar rule, FACTS §3).
 */
function versionGatedHeaders(headers: Readonly<Record<string, HeaderValue>>): Record<string, HeaderValue> {
  const { 'bq-attempts': _attempts, 'bq-schema-version': _version, ...rest } = headers;
  return rest;
}
