import type { Cluster, Redis } from 'ioredis';
import { ConfigurationError, type Logger } from '@babelqueue/core';

/** The two key layouts of the Redis binding. */
export type RedisLayout = 'legacy' | 'zset';

/** A connection the transport can use: a standalone client or a Redis Cluster client. */
export type RedisClient = Redis | Cluster;

/** Options of {@link RedisTransport}. */
export interface RedisTransportOptions {
  /**
   * `redis://` or `rediss://` URL (default `redis://127.0.0.1:6379`). The
   * transport owns the connections it opens from a URL and closes them in `close()`.
   */
  readonly url?: string;
  /** With `url`: treat it as a seed node of a Redis Cluster. */
  readonly cluster?: boolean;
  /**
   * An existing ioredis `Redis` or `Cluster` client instead of `url`. It stays
   * the caller's: `close()` leaves it open (blocking reads use a duplicate,
   * which the transport closes).
   */
  readonly redis?: RedisClient;
  /**
   * `legacy` (default): `<name>`, `<name>:processing`, `<name>:processing:deadlines`.
   * `zset`: Laravel's `queues:<name>`, `:delayed`, `:reserved`, `:notify`.
   */
  readonly layout?: RedisLayout;
  /**
   * Seconds a reservation lasts before recovery hands the message out again
   * (default 90). `null` disables recovery: the reservation is scored `+inf`.
   * Negative is a configuration error.
   */
  readonly retryAfter?: number | null;
  /** Zset layout: how many due members one migrate moves at most (default -1: no limit). */
  readonly migrationBatchSize?: number;
  /** Zset layout: how long one blocking wait for a notify token lasts, in seconds (0 < s <= 1, default 1). */
  readonly blockTimeoutS?: number;
  /** Zset layout: the key prefix a Laravel connection adds in front of every key (default ''). */
  readonly prefix?: string;
  /**
   * How many replicas must have a publish before it resolves (Redis `WAIT`
   * after the write): a publish a replica holds survives the primary's death,
   * since Sentinel promotes the replica with the most data. Default 1 with a
   * `redis+sentinel://` URL, else 0 (no wait). A publish that fewer replicas
   * confirm within {@link waitForReplicasMs} rejects with
   * {@link ReplicationTimeoutError}: it is on the primary but could be lost
   * with it, and publishing it again may deliver it twice (at least once).
   */
  readonly waitForReplicas?: number;
  /** How long a publish waits for {@link waitForReplicas}, in ms (default 1000). */
  readonly waitForReplicasMs?: number;
  /** Where the transport logs (never a message body). Default: the core's console logger. */
  readonly logger?: Logger;
}

/** The options after validation, with every default filled in. */
export interface ResolvedOptions {
  readonly layout: RedisLayout;
  readonly retryAfter: number | null;
  readonly migrationBatchSize: number;
  readonly blockTimeoutS: number;
  readonly prefix: string;
  readonly waitForReplicas: number;
  readonly waitForReplicasMs: number;
}

/** Thrown for an option the binding cannot run with; nothing has been connected yet. */
export class RedisConfigError extends ConfigurationError {
}

/** Validates the options that shape behaviour (the connection options are checked by the caller). */
export function resolveOptions(options: RedisTransportOptions): ResolvedOptions {
  const layout = options.layout ?? 'legacy';
  if (layout !== 'legacy' && layout !== 'zset') {
    throw new RedisConfigError(`layout must be "legacy" or "zset", got ${JSON.stringify(layout)}`);
  }
  const retryAfter = options.retryAfter === undefined ? 90 : options.retryAfter;
  if (retryAfter !== null && (!Number.isFinite(retryAfter) || retryAfter < 0)) {
    throw new RedisConfigError(`retryAfter must be a number of seconds >= 0 or null, got ${String(retryAfter)}`);
  }
  const migrationBatchSize = options.migrationBatchSize ?? -1;
  if (!Number.isInteger(migrationBatchSize) || (migrationBatchSize !== -1 && migrationBatchSize < 1)) {
    throw new RedisConfigError(`migrationBatchSize must be -1 (no limit) or a positive integer, got ${String(migrationBatchSize)}`);
  }
  const blockTimeoutS = options.blockTimeoutS ?? 1;
  if (!(blockTimeoutS > 0 && blockTimeoutS <= 1)) {
    throw new RedisConfigError(`blockTimeoutS must be > 0 and <= 1 second, got ${String(blockTimeoutS)}`);
  }
  const prefix = options.prefix ?? '';
  if (typeof prefix !== 'string') throw new RedisConfigError('prefix must be a string');
  if (options.url !== undefined && options.redis !== undefined) {
    throw new RedisConfigError('pass either url or redis, not both');
  }
  const waitForReplicas = options.waitForReplicas ?? (options.url?.toLowerCase().startsWith('redis+sentinel://') === true ? 1 : 0);
  if (!Number.isSafeInteger(waitForReplicas) || waitForReplicas < 0) {
    throw new RedisConfigError(`waitForReplicas must be an integer >= 0, got ${String(waitForReplicas)}`);
  }
  const waitForReplicasMs = options.waitForReplicasMs ?? 1000;
  if (!Number.isSafeInteger(waitForReplicasMs) || waitForReplicasMs < 1) {
    throw new RedisConfigError(`waitForReplicasMs must be an integer >= 1, got ${String(waitForReplicasMs)}`);
  }
  if (waitForReplicas > 0 && options.cluster === true) throw new RedisConfigError('waitForReplicas is for a primary with replicas (Sentinel), not a Redis Cluster');
  return { layout, retryAfter, migrationBatchSize, blockTimeoutS, prefix, waitForReplicas, waitForReplicasMs };
}
