import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '@babelqueue/core';
import { duplicate } from '../connection.js';
import { disconnectClient } from '../revive.js';
import type { RedisClient } from '../options.js';
import { Notifier } from './signal.js';

/** Why {@link KeyWatch.wait} returned. */
export type WakeReason = 'not-empty' | 'written' | 'timeout' | 'aborted';

const INVALIDATE = '__redis__:invalidate';

/**
 * Ends an idle consumer's sleep early when its ready list is written, by any
 * client (a Python or Laravel producer included, which know nothing of this):
 * Redis client-side tracking (Redis 6+), redirected to a Pub/Sub connection of
 * its own. A read of the list arms the tracking; Redis then sends the key's
 * name once it changes. The wait never lasts longer than the sleep it
 * replaces, so the spec's sleep-poll cadence holds when no wake-up comes (a
 * Redis Cluster client, tracking unavailable, a connection down).
 */
export class KeyWatch {
  private readonly waiting = new Map<string, Notifier>();
  private reader: Redis | undefined;
  private listener: Redis | undefined;
  private starting: Promise<boolean> | undefined;
  private closed = false;
  /** The server refused tracking (before Redis 6, or a proxy): sleep-poll for good. */
  private unsupported = false;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: Logger,
    private readonly fields: Record<string, unknown>,
  ) {}

  /**
   * Resolves once `key` (a list) is written, at once when it is not empty,
   * or after `timeoutMs`, or when `signal` aborts; says which.
   */
  async wait(key: string, timeoutMs: number, signal: AbortSignal): Promise<WakeReason> {
    if (signal.aborted) return 'aborted';
    const timeout = new AbortController();
    const onAbort = () => timeout.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const ended = new Promise<'end'>((resolve) => timeout.signal.addEventListener('abort', () => resolve('end'), { once: true }));
    try {
      // Arming waits on Redis: a connection down must not stretch the sleep.
      const woken = await Promise.race([this.arm(key), ended]);
      if (woken === 'not-empty') return woken;
      const why = woken === 'end' || woken === undefined ? await ended : await Promise.race([woken.next.then(() => 'written' as const), ended]);
      if (why === 'written') return why;
      return signal.aborted ? 'aborted' : 'timeout';
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Disconnects both connections. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  /**
   * Registers for `key`'s next change, then reads its length (the read arms
   * the tracking, so a write after it is never missed). Undefined when
   * tracking cannot be used.
   */
  private async arm(key: string): Promise<{ next: Promise<void> } | 'not-empty' | undefined> {
    if (!(await this.start())) return undefined;
    let notifier = this.waiting.get(key);
    if (notifier === undefined) this.waiting.set(key, (notifier = new Notifier()));
    const next = notifier.next();
    try {
      if ((await this.reader!.llen(key)) > 0) return 'not-empty';
    } catch {
      return undefined;
    }
    return { next };
  }

  /** Opens the listener and the tracked reader once; false when tracking is not available. */
  private start(): Promise<boolean> {
    if (this.closed || this.unsupported || this.client instanceof Cluster) return Promise.resolve(false);
    this.starting ??= (async () => {
      const source = this.client as Redis;
      // RESP2 on the listener: the invalidations then arrive as Pub/Sub messages
      // (ioredis has no event for RESP3 invalidation pushes).
      const listener = duplicate(source, this.logger, { protocol: 2 }) as Redis;
      const reader = duplicate(source, this.logger) as Redis;
      this.listener = listener;
      this.reader = reader;
      // A reconnect of either loses the redirect: start again on the next wait.
      for (const connection of [listener, reader]) {
        connection.once('close', () => {
          if (this.listener === listener) this.reset();
        });
      }
      try {
        const id = (await listener.client('ID')) as number;
        listener.on('messageBuffer', (channel: Buffer, keys: unknown) => this.invalidated(channel, keys));
        await listener.subscribe(INVALIDATE);
        await reader.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(id));
        return true;
      } catch (error) {
        if ((error as Error | undefined)?.name === 'ReplyError') {
          this.unsupported = true;
          this.logger.info({ ...this.fields, error: String(error) }, 'Redis refused client-side tracking; an idle consumer sleep-polls without early wake-ups');
        }
        if (this.listener === listener) this.reset();
        return false;
      }
    })();
    return this.starting;
  }

  private invalidated(channel: Buffer, keys: unknown): void {
    if (channel.toString() !== INVALIDATE) return;
    // A null payload means the whole tracking table was flushed: wake everyone.
    const names = Array.isArray(keys) ? keys.map(String) : [...this.waiting.keys()];
    for (const name of names) this.waiting.get(name)?.fire();
  }

  private reset(): void {
    const { listener, reader } = this;
    this.listener = undefined;
    this.reader = undefined;
    this.starting = undefined;
    if (listener !== undefined) disconnectClient(listener);
    if (reader !== undefined) disconnectClient(reader);
    for (const notifier of this.waiting.values()) notifier.fire();
  }
}
