import {
  DeadLetterWriteError,
  pause,
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
import { deadlineScore, dueScore, nowSeconds } from '../clock.js';
import { duplicate } from '../connection.js';
import { disconnectClient } from '../revive.js';
import { isFatal, slotGuard } from '../errors.js';
import { zsetKeys, type ZsetKeys } from '../keys.js';
import type { RedisClient, ResolvedOptions } from '../options.js';
import { Reserver, type Exchanged, type PendingAck, type Reserved, type Want } from '../consume/reserver.js';
import { untilAborted } from '../consume/wait.js';
import { Hold, leaseNow, readsAhead } from '../consume/lease.js';
import { renewal, reservationKeeper } from '../reservation.js';
import { SCRIPTS } from '../scripts.js';
import type { Layout } from './layout.js';
import { removeFromList, scanList } from '../scan.js';
import { publishInGroups } from '../publisher.js';
import { redisRules } from '../rules.js';

const RULES = redisRules('redis-zset');

/** Delays and delayed retries; no headers (the layout has no place for them and the spec forbids a frame). */
const CAPABILITIES: TransportCapabilities = { delayedPublish: true, delayedRetry: true, retry: true, headers: false };

const bare = (value: Buffer) => ({ body: value, headers: {} });

const POISON = 'the reserve script could not decode the job (not a JSON object with a numeric attempts)';

/**
 * Laravel's layout: `queues:<name>` with `:delayed`, `:reserved` and `:notify`.
 * The element is the bare envelope: no `__bq_frame`, so publish headers are
 * not carried (trace continuity rides on `trace_id`).
 */
export class ZsetLayout implements Layout {
  readonly rules = RULES;
  readonly capabilities = CAPABILITIES;
  readonly pollWaitMs: number;

  constructor(
    private readonly client: RedisClient,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
  ) {
    this.pollWaitMs = options.blockTimeoutS * 1000;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    const keys = this.keys(message.queue);
    const delayMs = message.delayMs ?? 0;
    if (delayMs > 0) {
      // A delayed element leaves no notify token: a blocked consumer finds it on its next migrate.
      await slotGuard(message.queue, this.client.zadd(keys.delayed, dueScore(delayMs), message.body));
      return;
    }
    await this.push(message.queue, message.body);
  }

  /**
   * Per queue, one push script for the messages due now (in order, a notify
   * token each) and one `ZADD :delayed` for the delayed ones, as
   * {@link publish} scores them.
   */
  publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    return publishInGroups(
      messages,
      (m) => `${(m.delayMs ?? 0) > 0 ? 'delayed' : 'ready'}:${m.queue}`,
      (batch) => {
        const queue = batch[0]!.queue;
        const keys = this.keys(queue);
        if ((batch[0]!.delayMs ?? 0) === 0) return slotGuard(queue, SCRIPTS.zsetPush.run(this.client, [keys.ready, keys.notify], batch.map((m) => m.body)));
        return slotGuard(queue, this.client.zadd(keys.delayed, ...batch.flatMap((m) => [dueScore(m.delayMs!), m.body])));
      },
    );
  }

  publishRaw(queue: string, body: Buffer): Promise<void> {
    return this.push(queue, body);
  }

  async browse(queue: string, max: number): Promise<Buffer[]> {
    if (max < 1) return [];
    return slotGuard(queue, this.client.lrangeBuffer(this.keys(queue).ready, 0, max - 1));
  }

  async purge(queue: string): Promise<number> {
    const keys = this.keys(queue);
    return Number(await slotGuard(queue, SCRIPTS.purge.run(this.client, [keys.ready, keys.delayed], [])));
  }

  /** The element is the bare envelope: no headers. */
  scan(queue: string, options: ScanOptions): AsyncGenerator<ScannedRecord> {
    return scanList(this.client, queue, this.keys(queue).ready, options, bare);
  }

  async depth(queue: string): Promise<number> {
    return Number(await slotGuard(queue, this.client.llen(this.keys(queue).ready)));
  }

  remove(queue: string, body: Buffer): Promise<boolean> {
    return removeFromList(this.client, queue, this.keys(queue).ready, body, bare);
  }

  reserver(queue: string): Reserver {
    return new ZsetReserver(this.client, this.keys(queue), queue, this.options, this.logger, (q) => this.keys(q));
  }

  private async push(queue: string, body: Buffer): Promise<void> {
    const keys = this.keys(queue);
    await slotGuard(queue, SCRIPTS.zsetPush.run(this.client, [keys.ready, keys.notify], [body]));
  }

  private keys(queue: string): ZsetKeys {
    return zsetKeys(this.options.prefix, queue);
  }
}

class ZsetReserver extends Reserver {
  readonly readsAhead: boolean;
  private blocking: RedisClient | undefined;
  private blpop: Promise<unknown> | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: ZsetKeys,
    private readonly queue: string,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
    private readonly keysOf: (queue: string) => ZsetKeys,
  ) {
    super(logger, { queue, layout: 'zset' });
    this.readsAhead = readsAhead(options.retryAfter, 'zset');
    this.keeper = reservationKeeper(options.retryAfter, logger, { queue, layout: 'zset' });
  }

  protected async exchange(acks: readonly PendingAck[], want: Want): Promise<Exchanged> {
    const { ready, delayed, reserved, notify } = this.keys;
    const { retryAfter, migrationBatchSize } = this.options;
    const lease = leaseNow();
    const reply = (await slotGuard(
      this.queue,
      SCRIPTS.zsetReserve.run(this.client, [ready, delayed, reserved, notify], [
        nowSeconds(),
        deadlineScore(retryAfter),
        migrationBatchSize,
        retryAfter === null ? '0' : '1',
        want.slots,
        want.ahead,
        lease.score,
        acks.length,
        ...acks.map((a) => a.handle),
      ]),
    )) as [number[], (Buffer | number)[]];
    const [acked, flat] = reply;
    const deliveries: Reserved[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const poison = flat[i + 2] === 1 ? undefined : POISON;
      const job = flat[i] as Buffer;
      const member = flat[i + 1] as Buffer;
      // The first `slots` are the slots' (the pop's member), the rest read-ahead (the raw job under the lease).
      const renew = retryAfter === null ? () => Promise.resolve(true) : renewal(this.client, reserved, member, retryAfter);
      const hold = new Hold([job, member], renew, i / 3 < want.slots ? undefined : lease.endsMs);
      const delivery = new ZsetDelivery(this, this.client, this.keys, this.queue, job, member, poison, this.logger, this.keysOf, hold);
      this.track(delivery);
      deliveries.push(delivery);
    }
    return { acked: acked.map((n) => n === 1), deliveries };
  }

  /** Read-ahead is held as its raw job. */
  protected renewLeases(holds: readonly Hold[], score: string): Promise<unknown> {
    return SCRIPTS.renew.run(this.client, [this.keys.reserved], [score, ...holds.map((h) => h.leaseArgs[0]!)]);
  }

  /**
   * The raw job becomes the pop's member at the deadline. Sent with EVAL: the
   * ack, retry or dead-letter that follows names the member, so this must run
   * first whatever the script cache holds.
   */
  protected beginLeases(holds: readonly Hold[]): Promise<unknown> {
    const { retryAfter } = this.options;
    return SCRIPTS.zsetBegin.runInOrder(this.client, [this.keys.reserved], [deadlineScore(retryAfter), ...holds.flatMap((h) => h.leaseArgs)]);
  }

  async giveBack(deliveries: readonly Reserved[]): Promise<number> {
    const { ready, reserved, notify } = this.keys;
    const args = deliveries.flatMap((d) => d.withdraw());
    return Number(await slotGuard(this.queue, SCRIPTS.zsetGiveBack.run(this.client, [ready, reserved, notify], args)));
  }

  /** BLPOP on `:notify` for at most one slice; a token is only a hint to look again. */
  async idle(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0) return;
    if (this.blpop === undefined) {
      const blocking = (this.blocking ??= duplicate(this.client, this.logger));
      const seconds = Math.max(0.01, Math.round(Math.min(ms, this.options.blockTimeoutS * 1000)) / 1000);
      this.blpop = slotGuard(this.queue, blocking.callBuffer('BLPOP', this.keys.notify, seconds))
        .catch((error: unknown) => {
          if (isFatal(error)) throw error;
          if (this.blocking !== undefined) this.logger.warn({ queue: this.queue, error: String(error) }, 'blocking wait failed');
          return pause(100, signal);
        })
        .finally(() => {
          this.blpop = undefined;
        });
    }
    await untilAborted(this.blpop, signal);
  }

  override close(): void {
    super.close();
    const blocking = this.blocking;
    this.blocking = undefined;
    if (blocking !== undefined) disconnectClient(blocking);
  }
}

/** One reservation: the raw job (what the handler sees) and its `:reserved` member (the handle). */
class ZsetDelivery implements Reserved {
  readonly headers = {};
  private readonly once = new SettleOnce();

  constructor(
    private readonly reserver: Reserver,
    private readonly client: RedisClient,
    private readonly keys: ZsetKeys,
    readonly queue: string,
    readonly body: Buffer,
    private readonly member: Buffer,
    readonly poison: string | undefined,
    private readonly logger: Logger,
    private readonly keysOf: (queue: string) => ZsetKeys,
    readonly hold: Hold,
  ) {}


  settle(decision: Decision): Promise<void> {
    this.reserver.untrack(this);
    return this.once.run(decision, (d) => this.execute(d));
  }

  /** Its handle now: the raw job while it is read-ahead under the lease, else the pop's member. */
  withdraw(): readonly Buffer[] {
    const handle = this.hold.leased ? this.body : this.member;
    this.reserver.untrack(this);
    return [handle, this.body];
  }

  private async execute(decision: Decision): Promise<void> {
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        // Rides on the next reserve call of the loop (one round trip for both).
        this.expiredUnless((await this.reserver.ack(this, this.member)) ? 1 : 0, decision.kind);
        return;
      case 'retry': {
        this.reserver.flushBegins();
        // The copy is the job's own bytes with attempts set, not the cjson member: only
        // recovery re-encodes (the spec's one exception to byte preservation).
        const copy = withAttempts(this.body, decision.attempts);
        const done = await slotGuard(
          this.queue,
          SCRIPTS.zsetRelease.run(this.client, [this.keys.reserved, this.keys.delayed], [
            this.member,
            dueScore(decision.delayMs),
            copy,
          ]),
        );
        this.expiredUnless(done, 'retry');
        return;
      }
      case 'dead-letter': {
        this.reserver.flushBegins();
        const dlq = this.keysOf(decision.queue);
        let done: unknown;
        try {
          done = await slotGuard(
            this.queue,
            SCRIPTS.zsetDeadLetter.run(this.client, [this.keys.reserved, dlq.ready, dlq.notify], [this.member, decision.record]),
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
    this.logger.warn({ queue: this.queue, layout: 'zset', action }, 'reservation expired');
  }
}
