import { ConfigurationError, type App, type Handler, type Logger } from '@babelqueue/core';
import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { onJobRegistrations } from './on-job.js';
import { getBabelQueueWorkerToken } from './tokens.js';

/** Core's default `connectTimeoutMs`: the bootstrap waits this long for the broker when the options name none. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** What a worker is given by its module. */
export interface WorkerSpec {
  readonly name: string;
  readonly app: App;
  /** The queue the worker consumes (the App's). */
  readonly queue: string;
  readonly logger: Logger;
  readonly consume: boolean;
  readonly concurrency: number | undefined;
  readonly connectTimeoutMs: number | undefined;
}

/**
 * The life of one `BabelQueueModule`: at application bootstrap it routes the
 * `@OnJob` methods naming the module to their provider instances, connects
 * (bootstrap fails with the `ConnectError` when the broker cannot be reached)
 * and starts `app.run()`; at shutdown (`app.close()`, or a signal with
 * `enableShutdownHooks()`) it stops taking messages and waits for the handlers
 * in flight up to the App's `shutdownTimeoutMs`, leaving the rest unsettled
 * for redelivery, then closes the transport.
 */
export class BabelQueueWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly stop = new AbortController();
  private running: Promise<void> | undefined;
  private handlerCount = 0;

  constructor(
    private readonly spec: WorkerSpec,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The number of `@OnJob` methods routed to this module at bootstrap. */
  get handlers(): number {
    return this.handlerCount;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { app, name, consume } = this.spec;
    this.route();
    if (!consume && this.handlerCount > 0) {
      throw new ConfigurationError(`BabelQueueModule "${name}" has consume: false, yet ${this.handlerCount} @OnJob handler(s) name it`);
    }
    await app.transport.connect({
      timeoutMs: this.spec.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      signal: this.stop.signal,
      ...(consume ? { queue: this.spec.queue } : {}),
    });
    if (!consume) return;
    let refused: unknown;
    let booting = true;
    this.running = app.run({
      signal: this.stop.signal,
      ...(this.spec.concurrency !== undefined ? { concurrency: this.spec.concurrency } : {}),
    }).catch((error: unknown) => {
      if (booting) refused = error;
      else this.spec.logger.error({ module: name, error: describe(error) }, `the BabelQueue worker "${name}" stopped on an error; it no longer consumes`);
    });
    // run() checks its settings before its first await: a refusal (a handler
    // timeout not below the reservation, …) fails the bootstrap, not a log line.
    await new Promise((resolve) => setImmediate(resolve));
    booting = false;
    if (refused !== undefined) {
      this.running = undefined; // never started: the shutdown closes the transport itself
      throw refused;
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    // run() drains within the App's shutdownTimeoutMs and closes the transport.
    if (this.running !== undefined) await this.running;
    else await this.spec.app.close();
  }

  /** Registers every `@OnJob` method naming this module on the App; refuses one naming no module. */
  private route(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (instance === null || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object | null;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (instance as Record<string, unknown>)[method];
        for (const { urn, name } of onJobRegistrations(fn)) {
          const where = `${instance.constructor.name}.${method}`;
          if (name !== this.spec.name) {
            this.checkNamed(name, urn, where);
            continue;
          }
          if (!wrapper.isDependencyTreeStatic()) {
            throw new ConfigurationError(`@OnJob('${urn}') on ${where}: the provider is request-scoped (or depends on one); a handler must live on a singleton provider`);
          }
          const handler: Handler = (data, message) => (fn as (d: unknown, m: unknown) => unknown).call(instance, data, message);
          this.spec.app.handle(urn, handler);
          this.handlerCount += 1;
        }
      }
    }
  }

  private checkNamed(name: string, urn: string, where: string): void {
    try {
      this.moduleRef.get(getBabelQueueWorkerToken(name), { strict: false });
    } catch {
      throw new ConfigurationError(`@OnJob('${urn}', { name: '${name}' }) on ${where}: no BabelQueueModule is registered with the name "${name}"`);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
