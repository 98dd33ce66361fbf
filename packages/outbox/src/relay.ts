import { EnvelopeCodec, type Logger, type Transport } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';
import type { OutboxStore } from './store.js';

/** Sends one stored body to `queue`; resolves once the broker has it. */
export type OutboxPublisher = (body: Buffer, queue: string) => Promise<void>;

/** Options of {@link OutboxRelay}. */
export interface OutboxRelayOptions {
  /** Rows claimed and published per `flush`. Default 100. */
  readonly batchSize?: number;
  /** Backoff after a failed publish: `min(step × max(1, priorAttempts + 1), cap)`. Default step 50 ms. */
  readonly backoffStepMs?: number;
  /** Default cap 5000 ms. */
  readonly backoffCapMs?: number;
  /** How the relay waits (tests pass a recorder). Default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Failed publishes are logged here (never the body). */
  readonly logger?: Logger;
}

/** What one `flush` or `drain` did. */
export interface RelayResult {
  readonly published: number;
  readonly failed: number;
}

/** Hard ceiling on `drain` passes when none is given. */
export const DRAIN_CEILING = 10_000;

/**
 * The read side: publishes committed outbox rows, byte-for-byte as stored,
 * and marks them published only after the broker took them. A relay that dies
 * in between leaves its rows pending (or claimed until the claim lapses), so
 * they are published again: at-least-once, dedupe on `meta.id` downstream.
 *
 * @example
 * ```ts
 * const relay = new OutboxRelay(transportPublisher(transport), new PostgresOutboxStore(pool));
 * await relay.run({ signal: shutdown.signal });
 * ```
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly stepMs: number;
  private readonly capMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly publish: OutboxPublisher,
    private readonly store: OutboxStore<unknown>,
    private readonly options: OutboxRelayOptions = {},
  ) {
    this.batchSize = positiveInt('batchSize', options.batchSize ?? 100);
    this.stepMs = nonNegative('backoffStepMs', options.backoffStepMs ?? 50);
    this.capMs = nonNegative('backoffCapMs', options.backoffCapMs ?? 5000);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** The backoff after a row that had failed `priorAttempts` times fails again. */
  backoffMs(priorAttempts: number): number {
    return Math.min(this.stepMs * Math.max(1, priorAttempts + 1), this.capMs);
  }

  /** One batch: claim, publish each row (a failing row is marked failed, backed off, and the rest go on), mark the published. */
  async flush(): Promise<RelayResult> {
    const records = await this.store.fetchUnpublished(this.batchSize);
    const published: string[] = [];
    let failed = 0;
    for (const record of records) {
      try {
        await this.publish(record.body, record.queue);
        published.push(record.id);
      } catch (error) {
        failed += 1;
        const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        this.options.logger?.warn({ outboxId: record.id, queue: record.queue, attempts: record.attempts + 1, error: why }, 'outbox publish failed; the row stays pending');
        await this.store.markFailed(record.id, why);
        const wait = this.backoffMs(record.attempts);
        if (wait > 0) await this.sleep(wait);
      }
    }
    if (published.length > 0) await this.store.markPublished(published);
    return { published: published.length, failed };
  }

  /** Flushes until a pass publishes nothing (empty, or only failing rows left), at most `maxPasses` (0: {@link DRAIN_CEILING}). */
  async drain(maxPasses = 0): Promise<RelayResult> {
    const ceiling = maxPasses > 0 ? maxPasses : DRAIN_CEILING;
    let published = 0;
    let failed = 0;
    for (let pass = 0; pass < ceiling; pass++) {
      const result = await this.flush();
      published += result.published;
      failed += result.failed;
      if (result.published === 0) break;
    }
    return { published, failed };
  }

  /** Drains, waits `pollMs` (default 1000), and again, until the signal aborts. Store errors are logged and retried. */
  async run(options: { signal: AbortSignal; pollMs?: number }): Promise<void> {
    const pollMs = options.pollMs ?? 1000;
    while (!options.signal.aborted) {
      try {
        await this.drain();
      } catch (error) {
        this.options.logger?.error({ error: error instanceof Error ? error.message : String(error) }, 'outbox relay pass failed; trying again');
      }
      await abortableSleep(pollMs, options.signal);
    }
  }
}

/**
 * A publisher onto a BabelQueue transport: the stored bytes go out unchanged,
 * with the binding's native projection read from them.
 */
export function transportPublisher(transport: Transport): OutboxPublisher {
  return async (body, queue) => {
    const envelope = EnvelopeCodec.decode(body.toString('utf8'));
    if (!EnvelopeCodec.accepts(envelope)) throw new TypeError('the stored body is not an accepted BabelQueue envelope');
    await transport.publish({ body, queue, projection: envelopeProjection(envelope) });
  };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be an integer >= 1, got ${String(value)}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0)) throw new RangeError(`${name} must be a number >= 0, got ${String(value)}`);
  return value;
}
