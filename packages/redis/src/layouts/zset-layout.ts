import {
  DeadLetterWriteError,
  withAttempts,
  type BindingRules,
  type Decision,
  type Delivery,
  type Logger,
  type OutgoingMessage,
  type TransportCapabilities,
} from '@babelqueue/core';
import { deadlineScore, dueScore, nowSeconds } from '../clock.js';
import { duplicate } from '../connect.js';
import { isFatal, slotGuard } from '../errors.js';
import { zsetKeys, type ZsetKeys } from '../keys.js';
import type { RedisClient, ResolvedOptions } from '../options.js';
import { SCRIPTS } from '../scripts.js';
import type { Layout, Reserver } from './layout.js';
import { SettleOnce } from './settle-once.js';
import { sleep, untilAborted } from './wait.js';

const RULES: BindingRules = {
  name: 'redis-zset',
  poisonWithoutDeadLetter: 'dead-letter-default',
  deleteStrategyDropsPoison: false,
  versionGateWithoutDeadLetter: 'drop',
};

const CAPABILITIES: TransportCapabilities = { delayedPublish: true, delayedRetry: true, retry: true };

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

  publishRaw(queue: string, body: Buffer): Promise<void> {
    return this.push(queue, body);
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

class ZsetReserver implements Reserver {
  private blocking: RedisClient | undefined;
  private failures = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: ZsetKeys,
    private readonly queue: string,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
    private readonly keysOf: (queue: string) => ZsetKeys,
  ) {}

  async fetch(max: number, waitMs: number, signal: AbortSignal): Promise<Delivery[]> {
    const until = Date.now() + waitMs;
    for (;;) {
      const batch = await this.reserve(max, signal);
      if (batch.length > 0 || signal.aborted) return batch;
      const left = until - Date.now();
      if (left <= 0) return batch;
      await this.waitForToken(Math.min(left, this.options.blockTimeoutS * 1000), signal);
    }
  }

  close(): void {
    this.blocking?.disconnect();
    this.blocking = undefined;
  }

  private async reserve(max: number, signal: AbortSignal): Promise<Delivery[]> {
    const { ready, delayed, reserved, notify } = this.keys;
    const { retryAfter, migrationBatchSize } = this.options;
    let reply: unknown;
    try {
      reply = await slotGuard(
        this.queue,
        SCRIPTS.zsetReserve.run(this.client, [ready, delayed, reserved, notify], [
          nowSeconds(),
          deadlineScore(retryAfter),
          migrationBatchSize,
          retryAfter === null ? '0' : '1',
          max,
        ]),
      );
      this.failures = 0;
    } catch (error) {
      if (isFatal(error)) throw error;
      this.failures += 1;
      this.logger.warn({ queue: this.queue, error: String(error) }, 'reserve failed; retrying');
      await sleep(Math.min(1000, 100 * 2 ** this.failures), signal);
      return [];
    }
    const flat = reply as (Buffer | number)[];
    const out: Delivery[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const job = flat[i] as Buffer;
      const member = flat[i + 1] as Buffer;
      const decoded = flat[i + 2] === 1;
      out.push(new ZsetDelivery(this.client, this.keys, this.queue, job, member, decoded ? undefined : POISON, this.logger, this.keysOf));
    }
    return out;
  }

  /** BLPOP on `:notify` for at most one slice; a token is only a hint to look again. */
  private async waitForToken(ms: number, signal: AbortSignal): Promise<void> {
    const blocking = (this.blocking ??= duplicate(this.client));
    const seconds = Math.max(0.01, Math.round(ms) / 1000);
    const pop = slotGuard(this.queue, blocking.callBuffer('BLPOP', this.keys.notify, seconds)).catch((error: unknown) => {
      if (isFatal(error)) throw error;
      if (!signal.aborted) this.logger.warn({ queue: this.queue, error: String(error) }, 'blocking wait failed');
      return null;
    });
    await untilAborted(pop, signal);
  }
}

/** One reservation: the raw job (what the handler sees) and its `:reserved` member (the handle). */
class ZsetDelivery implements Delivery {
  readonly headers = {};
  private readonly once = new SettleOnce();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: ZsetKeys,
    readonly queue: string,
    readonly body: Buffer,
    private readonly member: Buffer,
    readonly poison: string | undefined,
    private readonly logger: Logger,
    private readonly keysOf: (queue: string) => ZsetKeys,
  ) {}

  /** The body's own count; the runtime adds one, so a handler sees `job.attempts + 1` as Laravel does. */
  reconcileAttempts(bodyAttempts: number): number {
    return bodyAttempts;
  }

  settle(decision: Decision): Promise<void> {
    return this.once.run(decision, (d) => this.execute(d));
  }

  private async execute(decision: Decision): Promise<void> {
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.expiredUnless(await slotGuard(this.queue, this.client.zrem(this.keys.reserved, this.member)), decision.kind);
        return;
      case 'retry': {
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
