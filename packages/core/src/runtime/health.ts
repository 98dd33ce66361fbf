import type { Transport } from '../transport/transport.js';
import { ConfigurationError } from './errors.js';
import { checkOptionKeys } from './option-keys.js';

/**
 * The state of an App's workers, as {@link App.health} reports it and the
 * probe server (`run({ health: { port } })`) serves it.
 */
export interface AppHealth {
  /**
   * Liveness: a `run()` is alive (connecting, consuming or shutting down) and
   * not {@link stalled}. A broker outage does not make a worker dead: the
   * transport reconnects, and restarting the process would not bring the broker
   * back (that is readiness).
   */
  readonly live: boolean;
  /** Readiness: {@link connected} and {@link consuming}. */
  readonly ready: boolean;
  /**
   * The transport's connection to the broker is up now, as the binding reports
   * it (`Transport.connected`). A transport that does not report it counts as
   * connected while a worker consumes (its connect succeeded and its consume
   * loop has not failed).
   */
  readonly connected: boolean;
  /** A worker has connected and takes deliveries (false before, and from the start of a shutdown). */
  readonly consuming: boolean;
  /**
   * Deliveries wait while handlers idle. True when, for a consumed queue, all of:
   * - fewer deliveries are in flight than the run's `concurrency` (a handler slot is free);
   * - no delivery has started for longer than `stalledAfterMs` (counted from
   *   the start of consuming when none has started yet);
   * - the transport reports deliveries ready for this consumer
   *   (`Transport.readyCount(queue) > 0`), asked only once the two conditions
   *   above hold, with a 2 s deadline.
   *
   * A transport without `readyCount` (Kafka, Pulsar, Artemis, Service Bus,
   * whose counts include records held by other consumers or cost a browse of
   * the whole queue), a count that fails or misses its deadline, and a worker
   * that is not consuming, are never stalled.
   */
  readonly stalled: boolean;
  /** Deliveries handed to handlers and not finished yet, over every run. */
  readonly inFlight: number;
  /** The sum of the runs' `concurrency`. */
  readonly concurrency: number;
  /** When the last delivery was handed to a handler; null before the first. */
  readonly lastDeliveryAt: Date | null;
  /** When the broker last confirmed a settlement (ack, retry, dead-letter, …); null before the first. */
  readonly lastSettleAt: Date | null;
  /** The queues of the runs alive now. */
  readonly queues: readonly string[];
}

/** Options of the health of one `run()` (`RunOptions.health`). */
export interface HealthOptions {
  /** Serve `/healthz` and `/readyz` on this TCP port (0: any free port, logged). Absent: no server. */
  readonly port?: number | undefined;
  /** The address the probe server listens on. Default `127.0.0.1`; in a Kubernetes pod use `0.0.0.0` (the kubelet probes the pod IP). */
  readonly host?: string | undefined;
  /** See {@link AppHealth.stalled}. Default 60,000 ms. */
  readonly stalledAfterMs?: number | undefined;
}

/** {@link HealthOptions} checked, with the defaults filled in. */
export interface ResolvedHealthOptions {
  readonly port: number | undefined;
  readonly host: string;
  readonly stalledAfterMs: number;
}

const HEALTH_KEYS = ['port', 'host', 'stalledAfterMs'] as const;
/** How long the stalled check waits for the broker's count. */
const READY_COUNT_TIMEOUT_MS = 2_000;

export function resolveHealthOptions(options: HealthOptions | undefined): ResolvedHealthOptions {
  checkOptionKeys('run options.health', options, HEALTH_KEYS);
  const port = options?.port;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new ConfigurationError(`run options.health.port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const host = options?.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '') throw new ConfigurationError('run options.health.host must be a non-blank address');
  const stalledAfterMs = options?.stalledAfterMs ?? 60_000;
  if (typeof stalledAfterMs !== 'number' || !Number.isFinite(stalledAfterMs) || stalledAfterMs <= 0) {
    throw new ConfigurationError(`run options.health.stalledAfterMs must be a positive number of milliseconds, got ${String(stalledAfterMs)}`);
  }
  return { port, host, stalledAfterMs };
}

/**
 * What one consume loop reports to the health: the App's worker updates it for
 * each `run()`. Exported for tools that run their own loop over a transport
 * (the CLI's `consume --health-port`): call `started()` once consuming,
 * `delivered()`/`finished()` around each delivery, `settled()` after each
 * settlement, `stopping()` when it stops; read it with {@link healthOf}.
 */
export class RunHealth {
  /** Connected and taking deliveries. */
  consuming = false;
  inFlight = 0;
  lastDeliveryAt: number | undefined;
  lastSettleAt: number | undefined;
  private consumingSince = 0;

  constructor(readonly queue: string, readonly concurrency: number, readonly stalledAfterMs: number) {}

  started(): void {
    this.consuming = true;
    this.consumingSince = Date.now();
  }

  stopping(): void {
    this.consuming = false;
  }

  delivered(): void {
    this.inFlight += 1;
    this.lastDeliveryAt = Date.now();
  }

  finished(): void {
    this.inFlight -= 1;
  }

  settled(): void {
    this.lastSettleAt = Date.now();
  }

  /** The first two conditions of {@link AppHealth.stalled}: a slot free and nothing started for too long. */
  idleTooLong(now: number): boolean {
    return this.consuming && this.inFlight < this.concurrency && now - (this.lastDeliveryAt ?? this.consumingSince) > this.stalledAfterMs;
  }
}

/** The {@link AppHealth} of `runs` (the runs alive now) on `transport`. */
export async function healthOf(transport: Transport, runs: ReadonlySet<RunHealth>): Promise<AppHealth> {
  const all = [...runs];
  const consuming = all.some((run) => run.consuming);
  const reported = transport.connected;
  const connected = typeof reported === 'boolean' ? reported : consuming;
  const now = Date.now();
  const suspects = all.filter((run) => run.idleTooLong(now));
  const stalled = suspects.length > 0 && (await Promise.all(suspects.map((run) => readyWaiting(transport, run.queue)))).some(Boolean);
  const latest = (pick: (run: RunHealth) => number | undefined): Date | null => {
    const times = all.map(pick).filter((t): t is number => t !== undefined);
    return times.length === 0 ? null : new Date(Math.max(...times));
  };
  return {
    live: all.length > 0 && !stalled,
    ready: connected && consuming,
    connected,
    consuming,
    stalled,
    inFlight: all.reduce((sum, run) => sum + run.inFlight, 0),
    concurrency: all.reduce((sum, run) => sum + run.concurrency, 0),
    lastDeliveryAt: latest((run) => run.lastDeliveryAt),
    lastSettleAt: latest((run) => run.lastSettleAt),
    queues: [...new Set(all.map((run) => run.queue))],
  };
}

/** True when the transport counts deliveries ready on `queue`; false when it cannot tell in time. */
async function readyWaiting(transport: Transport, queue: string): Promise<boolean> {
  if (typeof transport.readyCount !== 'function') return false;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), READY_COUNT_TIMEOUT_MS);
  });
  try {
    const count = await Promise.race([transport.readyCount(queue), late]);
    return count !== undefined && count > 0;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
