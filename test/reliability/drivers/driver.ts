import type { Logger, Transport } from '@babelqueue/core';
import type { BrokerName } from '../../support/brokers.js';
import type { FuzzBody, FuzzOutcome } from '../fuzz/bodies.js';

/** What a driver builds a transport for. */
export interface DriverTarget {
  /** The lab broker's URL (`.brokers/env`). */
  readonly url: string;
  readonly logger: Logger;
  /**
   * The queue this transport is for (a Kafka consumer group is named after
   * it, so a DLQ reader never shares the workers' group).
   */
  readonly queue: string;
  /**
   * `worker` and `producer` use the binding as an application would;
   * `reader` only takes records off a queue (the DLQ) and acks them, so it
   * needs no retry machinery (no Kafka retry tiers).
   */
  readonly role: 'worker' | 'producer' | 'reader';
}

/** How hard the chaos loop hits one broker. */
export interface ChaosTuning {
  /** Worker processes running at once. */
  readonly workers: number;
  /** Deliveries each worker handles at once. */
  readonly concurrency: number;
  /** A worker is killed every [min, max] ms (uniform). */
  readonly killEveryMs: readonly [number, number];
  /**
   * The longest a message held by a killed worker can wait before the broker
   * hands it out again (a reservation, lock or session running out), plus
   * slack: the drain at the end waits at least this long for leftovers.
   */
  readonly redeliveryMs: number;
  /**
   * Messages published and not yet settled that the producer allows (its
   * backlog bound; default 500). Messages stranded by kills wait out a
   * reservation in it, so a broker with long waits needs a wider one.
   */
  readonly window?: number;
}

/**
 * One row of the reliability suite: how to run the BabelQueue binding of one
 * broker in the lab, and how to look at that broker from outside the binding.
 * A new binding adds one file with one of these and a line in `index.ts`.
 */
export interface BrokerDriver {
  /** The row's name in the report (`redis-legacy`). */
  readonly name: string;
  /** The lab broker it runs on (`scripts/brokers` name, `.brokers/env` variable). */
  readonly lab: BrokerName;
  /** One line for the README: what runs where. */
  readonly description: string;
  /** A transport of the binding, set up for this row. */
  transport(target: DriverTarget): Transport;
  /** The queue name to use for a base name (a hash tag on Redis Cluster). */
  queue(base: string): string;
  /** Creates what must exist before the first publish (topics with partitions, entity settings). */
  prepare?(target: DriverTarget, queue: string, dlq: string): Promise<void>;
  /**
   * What is still on the broker for `queue`, in every place a message can wait
   * (ready, reserved, delayed, in flight, on retry topics), by place. All zero
   * means nothing was left behind.
   */
  leftover(target: DriverTarget, queue: string): Promise<Record<string, number>>;
  /**
   * Why the broker cannot be restarted on its data in the lab, when it cannot
   * (the restart fault is then reported as not run, with this reason).
   */
  readonly noRestart?: string;
  /** The broker's client ports in the lab (a cut of a shared broker kills only the suite's own connections to them). */
  ports(url: string): number[];
  /** Cuts every client connection of the broker (only on a broker this checkout started); resolves with how it was done. */
  cut(target: DriverTarget): Promise<string>;
  /** Deletes what a run created (best effort). */
  cleanup(target: DriverTarget, queues: readonly string[]): Promise<void>;
  readonly chaos: ChaosTuning;
  /** The largest body this broker carries in one message (fuzz sizes stay below). */
  readonly maxBodyBytes: number;
  /**
   * Where this broker settles a fuzzed body differently from the common rule
   * (the Redis zset reserve script decodes every body with cjson first).
   */
  fuzzOutcome?(body: FuzzBody): FuzzOutcome | undefined;
  /** True when the broker itself cannot carry `body` (the publish must then fail loudly). */
  refuses?(body: Buffer): boolean;
  /** Set on a row of the cluster lab (its `lab` is then the broker kind, not a lab broker). */
  readonly cluster?: ClusterRow;
}

/**
 * What a row on the cluster lab (scripts/clusters, issue #30) adds to its
 * broker's driver: which cluster it runs on, and which node to kill mid-stream.
 */
export interface ClusterRow {
  /** The cluster's name in scripts/clusters (`kafka-ha`): `kill-node`/`restore-node` take it. */
  readonly name: string;
  /** The environment variable of its URL (`.clusters/env`). */
  readonly variable: string;
  /** The node whose death hurts `queue` most right now: the leader of its first partition, the active primary. */
  leader(target: DriverTarget, queue: string): Promise<number>;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
