import {
  consoleLogger,
  TransportClosedError,
  type ConnectOptions,
  type ConsumeOptions,
  type Logger,
  type OutgoingMessage,
  type PublishOutcome,
  type ScannedRecord,
  type ScanOptions,
  type Transport,
  type TransportCapabilities,
} from '@babelqueue/core';
import { Cluster, type Redis } from 'ioredis';
import { connectWithin, type BindingRules, type Delivery } from '@babelqueue/core/binding';
import { connect, DEFAULT_URL } from './connection.js';
import { coalescePublishes } from './coalesce-publishes.js';
import { disconnectClient, quitClient } from './revive.js';
import { ReplicationTimeoutError } from './errors.js';
import { maskRedisUrl } from './sentinel.js';
import { consumeLoop } from './consume-loop.js';
import type { Reserver } from './consume/reserver.js';
import type { Layout } from './layouts/layout.js';
import { LegacyLayout } from './layouts/legacy-layout.js';
import { ZsetLayout } from './layouts/zset-layout.js';
import { resolveOptions, type RedisClient, type RedisLayout, type RedisTransportOptions } from './options.js';

/**
 * The BabelQueue Redis binding. Two key layouts:
 *
 * - `legacy` (default): the reliable-queue layout `<name>`, `<name>:processing`,
 *   `<name>:processing:deadlines`; FIFO, recovery by a sweep before every
 *   reserve, no delays (a delayed publish is refused, a retry delay ignored).
 * - `zset`: Laravel's `queues:<name>`, `:delayed`, `:reserved`, `:notify`,
 *   byte-compatible with Laravel's own queue; delays and retry backoff.
 *
 * Poison is always dead-lettered (to `<queue>.dlq` even with dead-lettering
 * off). A failed dead-letter write leaves the message reserved. On Redis
 * Cluster every key of a queue must share a hash tag (`{orders}`).
 *
 * @example
 * ```ts
 * const transport = new RedisTransport({ url: 'redis://127.0.0.1:6379', layout: 'zset' });
 * const app = createApp({ transport, queue: 'orders' });
 * ```
 */
export class RedisTransport implements Transport {
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities;
  readonly target: string;
  /** The key layout in use. */
  readonly layout: RedisLayout;
  /** The connection commands go through (yours when passed as `redis`). */
  readonly client: RedisClient;
  private readonly impl: Layout;
  private readonly owned: boolean;
  private readonly logger: Logger;
  private readonly reservers = new Set<Reserver>();
  private readonly retryAfter: number | null;
  /** Zset layout: the key prefix in front of every key. */
  private readonly keyPrefix: string;
  /** Aborted by `close()`, so running consume loops stop instead of retrying a closed connection. */
  private readonly closing = new AbortController();
  private closed = false;
  /** Replicas that must confirm a publish (`WAIT`) before it resolves; 0: no wait. */
  private readonly waitForReplicas: number;
  private readonly waitForReplicasMs: number;

  constructor(options: RedisTransportOptions = {}) {
    const resolved = resolveOptions(options);
    this.layout = resolved.layout;
    this.owned = options.redis === undefined;
    const logger = (this.logger = options.logger ?? consoleLogger());
    this.client = options.redis ?? connect(options.url ?? DEFAULT_URL, options.cluster === true, logger);
    this.impl = resolved.layout === 'zset'
      ? new ZsetLayout(this.client, resolved, logger)
      : new LegacyLayout(this.client, resolved, logger);
    this.rules = this.impl.rules;
    this.capabilities = this.impl.capabilities;
    this.retryAfter = resolved.retryAfter;
    this.keyPrefix = resolved.prefix;
    this.waitForReplicas = resolved.waitForReplicas;
    this.waitForReplicasMs = resolved.waitForReplicasMs;
    const where = options.redis === undefined ? maskRedisUrl(options.url ?? DEFAULT_URL) : 'a Redis client you passed';
    this.target = `${where} (${resolved.layout} layout${options.cluster === true ? ', cluster' : ''})`;
  }

  /**
   * Waits until the connection is ready. Refused credentials (WRONGPASS,
   * NOAUTH) and an unknown host fail at once; a refused or silent port fails
   * when `timeoutMs` runs out, naming the last error ioredis saw.
   */
  connect(options: ConnectOptions): Promise<void> {
    const client = this.client;
    if (client.status === 'ready') return Promise.resolve();
    return connectWithin(this.target, options, ({ signal, note }) => new Promise<void>((resolve, reject) => {
      const done = () => {
        client.off('ready', onReady);
        client.off('error', onError);
        signal.removeEventListener('abort', done);
      };
      const onReady = () => {
        done();
        resolve();
      };
      const onError = (error: Error) => {
        if (!isFatalConnectError(error)) return note(error);
        done();
        reject(error);
      };
      client.on('ready', onReady);
      client.on('error', onError);
      signal.addEventListener('abort', done, { once: true });
      if (client.status === 'ready') onReady();
      else if (client.status === 'wait') void client.connect().catch(() => undefined);
    }));
  }

  /** `retryAfter` in ms (undefined when it is null: a reservation never expires). Renewed while a handler runs. */
  reservationMs(): number | undefined {
    return this.retryAfter === null ? undefined : this.retryAfter * 1000;
  }

  /**
   * Pushes the envelope bytes as given. Legacy: `RPUSH <queue>`, wrapped in a
   * `__bq_frame` when headers are given; a delay is refused. Zset: `RPUSH
   * queues:<queue>` plus a notify token, or with a delay `ZADD :delayed` at
   * `floor(now) + ceil(delay)` seconds; headers are not carried.
   */
  async publish(message: OutgoingMessage): Promise<void> {
    this.assertOpen();
    coalescePublishes(this.client);
    await this.impl.publish(message);
    await this.replicated(message.queue);
  }

  /**
   * Publishes a batch, each message as {@link publish} writes it, with one
   * write per queue, all in flight at once: legacy `RPUSH <queue> v1 … vn`;
   * zset one push script for the messages due now and one `ZADD :delayed` for
   * the delayed ones. A queue's keys share one hash slot, so on a cluster each
   * write goes to its node. A write fails or succeeds for all its messages.
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.assertOpen();
    coalescePublishes(this.client);
    const outcomes = await this.impl.publishMany(messages);
    if (this.waitForReplicas === 0 || !outcomes.some((o) => o.ok)) return outcomes;
    try {
      await this.replicated(messages[0]?.queue ?? '');
      return outcomes;
    } catch (error) {
      return outcomes.map((o) => (o.ok ? { ok: false, messageId: o.messageId, error: error as Error } : o));
    }
  }

  /** Pushes a record (dead-letter, redrive) to `queue` exactly like a publish without delay. */
  async publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>): Promise<void> {
    this.assertOpen();
    coalescePublishes(this.client);
    await this.impl.publishRaw(queue, body, headers);
    await this.replicated(queue);
  }

  /**
   * With `waitForReplicas`, waits until that many replicas hold every write
   * this connection made so far (`WAIT`), else throws {@link ReplicationTimeoutError}.
   */
  private async replicated(queue: string): Promise<void> {
    if (this.waitForReplicas === 0 || this.client instanceof Cluster) return;
    const confirmed = Number(await this.client.wait(this.waitForReplicas, this.waitForReplicasMs));
    if (confirmed < this.waitForReplicas) throw new ReplicationTimeoutError(queue, confirmed, this.waitForReplicas, this.waitForReplicasMs);
  }

  /**
   * Up to `max` bodies from the head of `queue`'s ready list, left in place
   * (`babelqueue dlq list|show`). Legacy: `LRANGE <queue>`, a `__bq_frame`
   * unwrapped to its inner envelope. Zset: `LRANGE <prefix>queues:<queue>`;
   * delayed and reserved messages are not listed.
   */
  browse(queue: string, max: number): Promise<Buffer[]> {
    return this.impl.browse(queue, max);
  }

  /**
   * Deletes the waiting messages of `queue` in one script and resolves with
   * how many there were (`babelqueue dlq purge`). Legacy: the ready list only;
   * `:processing` and its deadlines stay. Zset: the ready list and `:delayed`;
   * `:reserved` stays. Reservations belong to running consumers.
   */
  purge(queue: string): Promise<number> {
    return this.impl.purge(queue);
  }

  /**
   * Reads `queue`'s ready list from `offset` on in `LRANGE` windows of 500,
   * left in place (the DLQ console). Legacy: a `__bq_frame` is unwrapped (its
   * headers become the record's headers). Zset: bare envelopes, no headers.
   * Delayed and reserved messages are not waiting, so not scanned.
   */
  scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    return this.impl.scan(queue, options);
  }

  /**
   * The queues with a ready list: a `SCAN` (`TYPE list`) of every key, on
   * every master of a cluster. Legacy: each list but the `:processing` ones
   * (a `__bq_frame` list is named as the queue); zset: the `<prefix>queues:<name>`
   * lists, prefix removed.
   */
  async listQueues(): Promise<string[]> {
    const names = new Set<string>();
    const zset = this.layout === 'zset';
    const pattern = zset ? `${this.keyPrefix}queues:*` : '*';
    const nodes: Redis[] = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000, 'TYPE', 'list');
        cursor = next;
        for (const key of keys) {
          if (zset) {
            const name = key.slice(`${this.keyPrefix}queues:`.length);
            if (!name.endsWith(':notify')) names.add(name);
          } else if (!key.endsWith(':processing')) names.add(key);
        }
      } while (cursor !== '0');
    }
    return [...names];
  }

  /** `LLEN` of `queue`'s ready list. */
  depth(queue: string): Promise<number> {
    return this.impl.depth(queue);
  }

  /** The ready list's length ({@link depth}): reserved and delayed jobs are not ready. */
  readyCount(queue: string): Promise<number> {
    return this.impl.depth(queue);
  }

  /** The command connection is `ready` (ioredis' status): false while it reconnects and after `close()`. */
  get connected(): boolean {
    return !this.closed && this.client.status === 'ready';
  }

  /**
   * Removes one ready value of `queue` holding `body` with `LREM key 1 value`
   * (atomic; false when a consumer took it first). On the legacy layout a framed
   * value is matched by its inner envelope.
   */
  remove(queue: string, body: Buffer): Promise<boolean> {
    return this.impl.remove(queue, body);
  }

  /**
   * Reserves deliveries of `queue` (several per script call when slots are
   * free) with at most `concurrency` in flight, until the signal aborts or a
   * drain limit is reached; then waits for the in-flight ones to settle.
   * CROSSSLOT and WRONGTYPE stop the loop with the error; other Redis errors
   * are logged and retried.
   */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.assertOpen();
    const reserver = this.impl.reserver(queue);
    this.reservers.add(reserver);
    try {
      const signal = AbortSignal.any([options.signal, this.closing.signal]);
      await consumeLoop(reserver, onDelivery, { ...options, signal }, this.impl.pollWaitMs, this.logger, queue);
    } finally {
      reserver.close();
      this.reservers.delete(reserver);
    }
  }

  /**
   * Stops running consume loops (as an abort would: their read-ahead goes back
   * to the ready list, waiting at most 2 s for that), then closes the
   * connections the transport opened; a client passed as `redis` stays open.
   * Terminal: a second call is a no-op; publishing or consuming afterwards
   * rejects with `TransportClosedError`.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    // Before the connection goes: a read-ahead not given back waits for retryAfter.
    await Promise.race([Promise.all([...this.reservers].map((r) => r.stopped)), delay(GIVE_BACK_WAIT_MS)]);
    for (const reserver of this.reservers) reserver.close();
    this.reservers.clear();
    if (this.owned) {
      // QUIT waits for a reply that never comes while the broker is down.
      if (this.client.status !== 'ready') {
        disconnectClient(this.client);
        return;
      }
      try {
        await quitClient(this.client);
      } catch {
        // disconnect() below ends it.
      }
      // After QUIT too: only disconnect() closes a Sentinel client's failover-detector
      // subscriptions to the Sentinels, which would otherwise keep the process alive.
      disconnectClient(this.client);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('Redis');
  }
}

/** How long `close()` waits for running consume loops to give their read-ahead back. */
const GIVE_BACK_WAIT_MS = 2000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Errors no reconnect can fix: refused credentials, an unknown host. */
function isFatalConnectError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid (username|password)|ERR AUTH/i.test(error.message) ||
    code === 'ENOTFOUND';
}
