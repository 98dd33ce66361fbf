import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '@babelqueue/core';
import { duplicate } from '../connection.js';
import { disconnectClient } from '../revive.js';
import type { RedisClient } from '../options.js';

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
  /** Per key, the waits under way: each wakes when the key is written. */
  private readonly waiting = new Map<string, Set<() => void>>();
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
   * or after `timeoutMs`, or when `signal` aborts; says which. Nothing it
   * registers outlives it: an idle worker waits once a second for as long as
   * its queue stays empty.
   */
  async wait(key: string, timeoutMs: number, signal: AbortSignal): Promise<WakeReason> {
    if (signal.aborted) return 'aborted';
    let settle!: (why: WakeReason) => void;
    const result = new Promise<WakeReason>((resolve) => (settle = resolve));
    const onAbort = () => settle('aborted');
    const onWrite = () => settle('written');
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => settle('timeout'), timeoutMs);
    let listeners = this.waiting.get(key);
    if (listeners === undefined) this.waiting.set(key, (listeners = new Set()));
    // Listening before the read that arms the tracking: a write after it is never missed.
    listeners.add(onWrite);
    try {
      // The arming read is not waited for: with a connection down or a server
      // without tracking, the timer ends the wait as the plain sleep would.
      void this.arm(key).then((state) => state === 'not-empty' && settle(state));
      return await result;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      listeners.delete(onWrite);
      if (listeners.size === 0) this.waiting.delete(key);
    }
  }

  /** Disconnects both connections. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  /**
   * Reads `key`'s length on the tracked connection, which arms the tracking;
   * `armed` when it is empty, undefined when tracking cannot be used.
   */
  private async arm(key: string): Promise<'armed' | 'not-empty' | undefined> {
    // Never rejects: nobody waits for it, and the timer ends the wait regardless.
    try {
      if (!(await this.start())) return undefined;
      return (await this.reader!.llen(key)) > 0 ? 'not-empty' : 'armed';
    } catch {
      return undefined;
    }
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
    for (const name of names) for (const wake of this.waiting.get(name) ?? []) wake();
  }

  private reset(): void {
    const { listener, reader } = this;
    this.listener = undefined;
    this.reader = undefined;
    this.starting = undefined;
    if (listener !== undefined) disconnectClient(listener);
    if (reader !== undefined) disconnectClient(reader);
    for (const listeners of this.waiting.values()) for (const wake of listeners) wake();
  }
}
