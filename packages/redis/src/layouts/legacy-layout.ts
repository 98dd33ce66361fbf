import {
  DeadLetterWriteError,
  withAttempts,
  type Decision,
  type Logger,
  type OutgoingMessage,
  type PublishOutcome,
  type ScannedRecord,
  type ScanOptions,
  type TransportCapabilities,
} from '@babelqueue/core';
import { SettleOnce } from '@babelqueue/core/binding';
import { deadlineScore, nowSeconds } from '../clock.js';
import { DelayedPublishUnsupportedError, slotGuard } from '../errors.js';
import { frameValue, unframe } from '../projection.js';
import { legacyKeys, type LegacyKeys } from '../keys.js';
import type { RedisClient, ResolvedOptions } from '../options.js';
import { SCRIPTS } from '../scripts.js';
import { reservationTokens } from '../token.js';
import { Reserver, type Exchanged, type PendingAck, type Reserved, type Want } from '../consume/reserver.js';
import { Hold, leaseNow, readsAhead } from '../consume/lease.js';
import { KeyWatch } from '../consume/key-watch.js';
import type { Layout } from './layout.js';
import { removeFromList, scanList } from '../scan.js';
import { publishInGroups } from '../publisher.js';
import { redisRules } from '../rules.js';
import { renewal, reservationKeeper } from '../reservation.js';

const RULES = redisRules('redis-legacy');

/**
 * No delayed set: no delayed publish, and a retry goes straight back (its delay is ignored).
 * Headers ride in a `__bq_frame`.
 */
const CAPABILITIES: TransportCapabilities = { delayedPublish: false, delayedRetry: false, retry: true, headers: true };

/** The sleep-poll of an empty queue: 100 ms, doubling after every empty poll, capped at 1 s. */
const POLL_MIN_MS = 100;
const POLL_MAX_MS = 1000;

/** `<token>:<raw>`, the deadline member of the `i`th token of `tokens` ({@link reservationTokens}), in one allocation. */
function deadlineMember(tokens: string, i: number, raw: Buffer): Buffer {
  const member = Buffer.allocUnsafe(33 + raw.length);
  member.write(tokens.slice(32 * i, 32 * i + 32), 0, 32, 'latin1');
  member[32] = 0x3a;
  raw.copy(member, 33);
  return member;
}

/**
 * The reliable-queue layout: `<name>` (ready), `<name>:processing` and the
 * `<name>:processing:deadlines` zset of `<token>:<raw>` members.
 */
export class LegacyLayout implements Layout {
  readonly rules = RULES;
  readonly capabilities = CAPABILITIES;
  readonly pollWaitMs = POLL_MAX_MS;

  constructor(
    private readonly client: RedisClient,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
  ) {}

  async publish(message: OutgoingMessage): Promise<void> {
    if ((message.delayMs ?? 0) > 0) throw new DelayedPublishUnsupportedError(message.queue);
    await this.publishRaw(message.queue, message.body, message.headers);
  }

  /** One `RPUSH <queue> v1 … vn` per queue; a delayed message is refused alone. */
  publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    return publishInGroups(
      messages,
      (m) => ((m.delayMs ?? 0) > 0 ? new DelayedPublishUnsupportedError(m.queue) : m.queue),
      (batch) => slotGuard(batch[0]!.queue, this.client.rpush(batch[0]!.queue, ...batch.map((m) => frameValue(m.body, m.headers)))),
    );
  }

  async publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>): Promise<void> {
    await slotGuard(queue, this.client.rpush(queue, frameValue(body, headers)));
  }

  async browse(queue: string, max: number): Promise<Buffer[]> {
    if (max < 1) return [];
    const values = await slotGuard(queue, this.client.lrangeBuffer(queue, 0, max - 1));
    return values.map((value) => unframe(value).body);
  }

  async purge(queue: string): Promise<number> {
    return Number(await slotGuard(queue, SCRIPTS.purge.run(this.client, [legacyKeys(queue).ready], [])));
  }

  /** A `__bq_frame` is unwrapped: its inner envelope is the body, its headers the native metadata. */
  scan(queue: string, options: ScanOptions): AsyncGenerator<ScannedRecord> {
    return scanList(this.client, queue, legacyKeys(queue).ready, options, unframe);
  }

  async depth(queue: string): Promise<number> {
    return Number(await slotGuard(queue, this.client.llen(legacyKeys(queue).ready)));
  }

  remove(queue: string, body: Buffer): Promise<boolean> {
    return removeFromList(this.client, queue, legacyKeys(queue).ready, body, unframe);
  }

  reserver(queue: string): Reserver {
    return new LegacyReserver(this.client, queue, this.options, this.logger);
  }
}

class LegacyReserver extends Reserver {
  readonly readsAhead: boolean;
  private readonly keys: LegacyKeys;
  private pollMs = POLL_MIN_MS;
  private readonly watch: KeyWatch;

  constructor(
    private readonly client: RedisClient,
    private readonly queue: string,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
  ) {
    super(logger, { queue, layout: 'legacy' });
    this.readsAhead = readsAhead(options.retryAfter, 'legacy');
    this.keys = legacyKeys(queue);
    this.keeper = reservationKeeper(options.retryAfter, logger, { queue, layout: 'legacy' });
    this.watch = new KeyWatch(client, logger, { queue, layout: 'legacy' });
  }

  protected async exchange(acks: readonly PendingAck[], want: Want): Promise<Exchanged> {
    const tokens = reservationTokens(want.slots + want.ahead);
    const lease = leaseNow();
    const { retryAfter } = this.options;
    const reply = (await slotGuard(
      this.queue,
      SCRIPTS.legacyReserve.run(this.client, [this.keys.ready, this.keys.processing, this.keys.deadlines], [
        nowSeconds(),
        deadlineScore(retryAfter),
        want.slots,
        lease.score,
        acks.length,
        ...acks.map((a) => a.handle),
        tokens,
      ]),
    )) as [number[], Buffer[]];
    const [acked, raws] = reply;
    const deliveries = raws.map((raw, i) => {
      const member = deadlineMember(tokens, i, raw);
      // The first `slots` are the slots' (the full reservation), the rest read-ahead (the lease).
      const renew = retryAfter === null ? () => Promise.resolve(true) : renewal(this.client, this.keys.deadlines, member, retryAfter);
      const hold = new Hold([member], renew, i < want.slots ? undefined : lease.endsMs);
      const delivery = new LegacyDelivery(this, this.client, this.keys, this.queue, raw, member, hold, this.logger);
      this.track(delivery);
      return delivery;
    });
    return { acked: acked.map((n) => n === 1), deliveries };
  }

  protected renewLeases(holds: readonly Hold[], score: string): Promise<unknown> {
    return SCRIPTS.renew.run(this.client, [this.keys.deadlines], [score, ...holds.map((h) => h.leaseArgs[0]!)]);
  }

  /** The same deadline member, scored by the deadline (`+inf` with `retryAfter: null`). */
  protected beginLeases(holds: readonly Hold[]): Promise<unknown> {
    return SCRIPTS.renew.runInOrder(this.client, [this.keys.deadlines], [deadlineScore(this.options.retryAfter), ...holds.map((h) => h.leaseArgs[0]!)]);
  }

  async giveBack(deliveries: readonly Reserved[]): Promise<number> {
    const args = deliveries.flatMap((d) => d.withdraw());
    return Number(await slotGuard(this.queue, SCRIPTS.legacyGiveBack.run(this.client, [this.keys.ready, this.keys.processing, this.keys.deadlines], args)));
  }

  /**
   * The sleep-poll: 100 ms, doubling after every empty poll, capped at 1 s.
   * A write to the ready list (by any producer) ends the sleep early.
   */
  async idle(ms: number, signal: AbortSignal): Promise<void> {
    const waitMs = Math.min(ms, this.pollMs);
    if (waitMs > 0 && (await this.watch.wait(this.keys.ready, waitMs, signal)) !== 'timeout') return;
    this.pollMs = Math.min(this.pollMs * 2, POLL_MAX_MS);
  }

  override active(): void {
    this.pollMs = POLL_MIN_MS;
  }

  override close(): void {
    super.close();
    this.watch.close();
  }
}

/**
 * One reservation. The stored value (a bare envelope or a `__bq_frame`) is the
 * handle: `LREM` removes it and the deadline member holds it after the token.
 */
class LegacyDelivery implements Reserved {
  readonly body: Buffer;
  /** The frame's headers (riders); every copy (retry, dead-letter record) is framed with them again. */
  readonly headers: Readonly<Record<string, string>>;
  private readonly once = new SettleOnce();

  constructor(
    private readonly reserver: Reserver,
    private readonly client: RedisClient,
    private readonly keys: LegacyKeys,
    readonly queue: string,
    private readonly raw: Buffer,
    private readonly member: Buffer,
    readonly hold: Hold,
    private readonly logger: Logger,
  ) {
    // A framed poison body is dead-lettered from the inner body; the frame stays the handle.
    const unframed = unframe(raw);
    this.body = unframed.body;
    this.headers = unframed.headers;
  }


  settle(decision: Decision): Promise<void> {
    this.reserver.untrack(this);
    return this.once.run(decision, (d) => this.execute(d));
  }

  withdraw(): readonly Buffer[] {
    this.reserver.untrack(this);
    return [this.member];
  }

  private async execute(decision: Decision): Promise<void> {
    const { ready, processing, deadlines } = this.keys;
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        // Rides on the next reserve call of the loop (one round trip for both).
        this.expiredUnless((await this.reserver.ack(this, this.member)) ? 1 : 0, decision.kind);
        return;
      case 'retry': {
        this.reserver.flushBegins();
        // No delayed set: the copy goes straight back whatever the delay says.
        const copy = frameValue(withAttempts(this.body, decision.attempts), this.headers);
        const done = await slotGuard(
          this.queue,
          SCRIPTS.legacyRetry.run(this.client, [ready, processing, deadlines], [this.member, this.raw, copy]),
        );
        this.expiredUnless(done, 'retry');
        return;
      }
      case 'dead-letter': {
        this.reserver.flushBegins();
        // The riders (traceparent, tracestate) ride the record as they ride every other binding's.
        const record = frameValue(decision.record, this.headers);
        let done: unknown;
        try {
          done = await slotGuard(
            this.queue,
            SCRIPTS.legacyDeadLetter.run(this.client, [processing, deadlines, decision.queue], [this.member, this.raw, record]),
            decision.queue,
          );
        } catch (cause) {
          throw new DeadLetterWriteError(decision.queue, { cause });
        }
        this.expiredUnless(done, 'dead-letter');
        return;
      }
      case 'unsettled':
        return;
      case 'native-dead-letter':
        throw new Error('Redis has no native dead-letter queue; the delivery is left reserved');
    }
  }

  private expiredUnless(result: unknown, action: string): void {
    if (result === 1) return;
    this.logger.warn({ queue: this.queue, layout: 'legacy', action }, 'reservation expired');
  }
}
