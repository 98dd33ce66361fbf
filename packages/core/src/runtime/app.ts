import type { PolicyConfig } from '../settlement/policy-config.js';
import type { Delivery, Transport } from '../transport/transport.js';
import { resolveSettings, type AppSettings } from './app-settings.js';
import { processDelivery, type ProcessorContext } from './delivery-processor.js';
import { ConfigurationError } from './errors.js';
import type { Handler, UrnCatalog } from './message.js';
import { checkOptionKeys } from './option-keys.js';
import { Publisher, type PublishOptions } from './publisher.js';
import { startupChecks } from './startup-checks.js';
import { InterruptWatch } from './handler-run.js';
import { runWorker } from './worker.js';
import { healthOf, resolveHealthOptions, RunHealth, type AppHealth, type HealthOptions } from './health.js';
import { serveHealth, type HealthServer } from './health-server.js';
import type { AppOptions, UntypedCatalog, UrnOf } from './app-options.js';

export type { PublishOptions } from './publisher.js';
export type { AppOptions, CatalogData, DeadLetterOptions, UntypedCatalog, UrnOf } from './app-options.js';
export type { AppHealth, HealthOptions } from './health.js';


/** Options of {@link App.run}. */
export interface RunOptions {
  /** Queue to consume; default the App's queue. */
  readonly queue?: string | undefined;
  /** Deliveries handled at once. Default 1. */
  readonly concurrency?: number | undefined;
  /** Aborting starts the graceful shutdown (see `shutdownTimeoutMs`). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Shut down on SIGINT / SIGTERM (Ctrl-C); a second signal exits the process at
   * once, leaving what is in flight for redelivery. The library then owns the
   * process's end: a handler still running after the worker stopped (past the
   * deadline or its timeout) makes the exit code the signal's (130 / 143), and
   * the process is exited 2 s after `run()` resolved if it has not ended by
   * itself. Default false.
   */
  readonly handleSignals?: boolean | undefined;
  /**
   * Health of this run: `{ port }` serves `GET /healthz` (liveness) and
   * `GET /readyz` (readiness) with JSON bodies on `host` (default
   * `127.0.0.1`) from the start of `run()` to its end; `stalledAfterMs` sets
   * when {@link AppHealth.stalled} may turn true. See {@link App.health}.
   */
  readonly health?: HealthOptions | undefined;
}

/** Options of {@link App.consume}. */
export interface ConsumeOnceOptions {
  readonly queue?: string | undefined;
  /** Stop after this many deliveries. */
  readonly maxMessages?: number | undefined;
  /** Stop once nothing arrived for this long while consuming (subscribing or reconnecting does not count). Default 1000 ms. */
  readonly idleMs?: number | undefined;
  readonly concurrency?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link App.process}. */
export interface ProcessOptions {
  /**
   * A handler timeout for this delivery alone, in ms (a serverless function's
   * remaining time); the lower of it and the App's `handlerTimeoutMs` applies.
   */
  readonly handlerTimeoutMs?: number;
}



/**
 * Registers handlers by URN, publishes envelopes and runs the consume loop on
 * one transport. With a URN catalog (`createApp<Catalog>()`), `handle` and
 * `publish` take only the catalog's URNs and check each payload's type.
 */
export interface App<C extends UrnCatalog = UntypedCatalog> {
  /**
   * Routes `urn` to `handler`. One handler per URN. Without a catalog, name the
   * payload type with `handle<OrderCreated>(urn, handler)`.
   */
  handle: C extends UntypedCatalog
    ? <TData extends object = Record<string, unknown>>(urn: string, handler: Handler<TData>) => App<C>
    : <U extends UrnOf<C>>(urn: U, handler: Handler<C[U]>) => App<C>;
  /** Builds, encodes and publishes one envelope; resolves with its `meta.id` once the broker has it. */
  publish: C extends UntypedCatalog
    ? (urn: string, data: object, options?: PublishOptions) => Promise<string>
    : <U extends UrnOf<C>>(urn: U, data: C[U], options?: PublishOptions) => Promise<string>;
  /**
   * Builds one envelope per payload, exactly as `publish` does (same checks, a
   * fresh `meta.id` each, `options` applied to every item), and sends them in
   * one batch with the broker's own batching where the transport has it
   * (`Transport.publishMany`), else as concurrent single publishes. A payload
   * that cannot be an envelope fails the call before anything is sent.
   * Resolves with the `meta.id`s in order once the broker has every message.
   * If any message failed, **rejects** with a `PublishManyError` whose
   * `results` give every item's id and outcome in order (`failed`: the
   * indexes to retry), so a partial failure cannot go unnoticed.
   */
  publishMany: C extends UntypedCatalog
    ? (urn: string, items: readonly object[], options?: PublishOptions) => Promise<string[]>
    : <U extends UrnOf<C>>(urn: U, items: readonly C[U][], options?: PublishOptions) => Promise<string[]>;
  /**
   * Connects (failing with a `ConnectError` within `connectTimeoutMs` when the
   * broker cannot be reached), logs `consuming <queue> on <target>`, and
   * consumes until the signal aborts; then shuts down within
   * `shutdownTimeoutMs` and closes the transport.
   */
  run(options?: RunOptions): Promise<void>;
  /** Consumes until `maxMessages` or `idleMs` is reached (tests and scripts); returns deliveries handled. */
  consume(options?: ConsumeOnceOptions): Promise<number>;
  /**
   * Runs one delivery that the caller received itself (a serverless trigger,
   * such as the SQS event of an AWS Lambda function: `@babelqueue/aws-lambda`)
   * through the same path as the consume loop: version gate, decode, attempts,
   * handler by URN, the settlement policy, then `delivery.settle(decision)`
   * exactly once. Bad options throw a `ConfigurationError`; otherwise it never
   * rejects: what fails is logged and the delivery left unsettled. The caller connects nothing; the transport is used only by the
   * delivery's settlement and by handlers that publish.
   */
  process(delivery: Delivery, options?: ProcessOptions): Promise<void>;
  /**
   * The state of the App's `run()` workers (see {@link AppHealth}): live,
   * ready, connected, consuming, stalled, in flight, the last delivery and
   * settlement. Resolves without asking the broker unless a worker may be
   * stalled (then the transport's `readyCount`, at most 2 s). `consume()`
   * drains are not counted.
   */
  health(): Promise<AppHealth>;
  /** The transport the App was created with (a serverless adapter settles through it). */
  readonly transport: Transport;
  /** Closes the transport. */
  close(): Promise<void>;
  /** The DLQ name used for `queue` (or the App's queue), whether or not dead-lettering is on. */
  deadLetterQueueName(queue?: string): string;
}

const RUN_KEYS = ['queue', 'concurrency', 'signal', 'handleSignals', 'health'] as const;
const CONSUME_KEYS = ['queue', 'maxMessages', 'idleMs', 'concurrency', 'signal'] as const;
const PROCESS_KEYS = ['handlerTimeoutMs'] as const;

/**
 * Creates an {@link App}. Options are validated here, so a bad setting (an
 * unknown key, a DLQ that is its own queue, …) fails at start-up.
 *
 * @example
 * ```ts
 * const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', deadLetter: true });
 * app.handle('urn:babel:orders:created', async (data, message) => console.log(data, message.traceId));
 * await app.publish('urn:babel:orders:created', { order_id: 1042 });
 * await app.run({ concurrency: 8, handleSignals: true });
 * ```
 */
export function createApp<C extends UrnCatalog = UntypedCatalog>(options: AppOptions<C>): App<C> {
  const settings = resolveSettings(options as unknown as AppOptions);
  const { transport, logger } = settings;
  const handlers = new Map<string, Handler>();
  const configs = new Map<string, PolicyConfig>();
  const config = (queue: string): PolicyConfig => {
    let found = configs.get(queue);
    if (found === undefined) {
      found = settings.policyConfig(queue);
      configs.set(queue, found);
    }
    return found;
  };
  config(settings.queue); // a DLQ that is the App's own queue fails here, at createApp

  const context = (extra: Pick<ProcessorContext, 'interrupt'>): ProcessorContext => ({
    transport,
    handlers,
    config,
    logger,
    maxBodyBytes: settings.maxBodyBytes,
    ...(settings.handlerTimeoutMs !== undefined ? { handlerTimeoutMs: settings.handlerTimeoutMs } : {}),
    ...extra,
    // The hook sees the catalog's payload types; the processor passes whatever was decoded.
    ...(options.onFailed ? { onFailed: options.onFailed as NonNullable<ProcessorContext['onFailed']> } : {}),
    ...(options.onDrop ? { onDrop: options.onDrop } : {}),
    ...(settings.instrumentation ? { instrumentation: settings.instrumentation } : {}),
    ...(settings.deadLetter?.stack === true ? { deadLetterStack: true } : {}),
  });
  const drainContext = context({});

  const publisher = new Publisher({ transport, logger, queue: settings.queue, instrumentation: settings.instrumentation });
  const checks = startupChecks(settings, handlers, config);
  const runs = new Set<RunHealth>();
  const health = () => healthOf(transport, runs);

  const app = {
    handle(urn: string, handler: Handler) {
      if (typeof urn !== 'string' || urn.trim() === '') throw new ConfigurationError('a handler needs a non-blank URN');
      if (typeof handler !== 'function') throw new ConfigurationError(`the handler for ${urn} must be a function, got ${typeof handler}`);
      const key = urn.trim();
      if (handlers.has(key)) throw new ConfigurationError(`a handler is already registered for ${key}`);
      handlers.set(key, handler);
      return app;
    },

    publish: (urn: string, data: object, publishOptions?: PublishOptions) => publisher.publish(urn, data, publishOptions),

    publishMany: (urn: string, items: readonly object[], publishOptions?: PublishOptions) => publisher.publishMany(urn, items, publishOptions),

    async run(runOptions: RunOptions = {}) {
      checkOptionKeys('run options', runOptions, RUN_KEYS);
      const queue = queueName('run options.queue', runOptions.queue ?? settings.queue);
      const concurrency = positive(runOptions.concurrency ?? 1);
      const healthOptions = resolveHealthOptions(runOptions.health);
      checks.beforeConsume(queue, true);
      const runHealth = new RunHealth(queue, concurrency, healthOptions.stalledAfterMs);
      const onSettled = () => runHealth.settled();
      // The worker passes the same interrupt signal for every delivery of this run: one context per run.
      let runContext: ProcessorContext | undefined;
      let server: HealthServer | undefined;
      if (healthOptions.port !== undefined) {
        server = await serveHealth(health, healthOptions.port, healthOptions.host, logger);
        logger.info({ host: healthOptions.host, port: server.port }, `health probes on http://${healthOptions.host}:${server.port}/healthz and /readyz`);
      }
      runs.add(runHealth);
      try {
        await runWorker({
          transport,
          queue,
          concurrency,
          deadLettering: config(queue).deadLetterQueue !== undefined,
          maxAttempts: config(queue).maxAttempts,
          logger,
          signal: runOptions.signal,
          handleSignals: runOptions.handleSignals === true,
          connectTimeoutMs: settings.connectTimeoutMs,
          shutdownTimeoutMs: settings.shutdownTimeoutMs,
          process: (delivery, interrupt) => processDelivery(delivery, runContext ??= { ...context({ interrupt: new InterruptWatch(interrupt) }), onSettled }),
          started: () => checks.started(queue, concurrency),
          stillRunning: () => runContext?.interrupt?.live ?? 0,
          health: runHealth,
        });
      } finally {
        runs.delete(runHealth);
        await server?.close();
      }
    },

    async consume(consumeOptions: ConsumeOnceOptions = {}) {
      checkOptionKeys('consume options', consumeOptions, CONSUME_KEYS);
      const queue = queueName('consume options.queue', consumeOptions.queue ?? settings.queue);
      const concurrency = positive(consumeOptions.concurrency ?? 1);
      checks.beforeConsume(queue, false);
      const signal = consumeOptions.signal ?? new AbortController().signal;
      await transport.connect({ timeoutMs: settings.connectTimeoutMs, signal, queue });
      checks.started(queue, concurrency);
      let handled = 0;
      await transport.consume(queue, (delivery) => {
        handled += 1;
        return processDelivery(delivery, drainContext);
      }, {
        concurrency,
        signal,
        deadLettering: config(queue).deadLetterQueue !== undefined,
        maxAttempts: config(queue).maxAttempts,
        idleMs: consumeOptions.idleMs ?? 1000,
        ...(consumeOptions.maxMessages !== undefined ? { maxMessages: consumeOptions.maxMessages } : {}),
      });
      return handled;
    },

    process(delivery: Delivery, processOptions: ProcessOptions = {}) {
      checkOptionKeys('process options', processOptions, PROCESS_KEYS);
      const timeout = processOptions.handlerTimeoutMs;
      if (timeout === undefined) return processDelivery(delivery, drainContext);
      if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0) {
        throw new ConfigurationError(`process options.handlerTimeoutMs must be a positive number of milliseconds, got ${String(timeout)}`);
      }
      const handlerTimeoutMs = settings.handlerTimeoutMs === undefined ? timeout : Math.min(timeout, settings.handlerTimeoutMs);
      return processDelivery(delivery, { ...drainContext, handlerTimeoutMs });
    },

    health,

    transport,

    close: () => transport.close(),

    deadLetterQueueName(queue: string = settings.queue) {
      return config(queue).deadLetterQueue ?? config(queue).defaultDeadLetterQueue;
    },
  };
  return app as unknown as App<C>;
}

/** The settings a started worker reads; exported for the start-up checks. */
export type { AppSettings };

function queueName(what: string, queue: unknown): string {
  if (typeof queue !== 'string' || queue.trim() === '') {
    throw new ConfigurationError(`${what} must be a non-blank string, got ${queue === null ? 'null' : typeof queue === 'string' ? '""' : typeof queue}`);
  }
  return queue;
}

function positive(concurrency: number): number {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigurationError(`concurrency must be an integer >= 1, got ${String(concurrency)}`);
  }
  return concurrency;
}
