import type { AppOptions, Logger, Transport, UrnCatalog } from '@babelqueue/core';
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import type { RegisteredCatalog } from './catalog.js';

/**
 * What one `BabelQueueModule` runs: a broker (`url` or `transport`), every
 * `createApp` option, and how its worker consumes.
 */
export interface BabelQueueOptions<C extends UrnCatalog = RegisteredCatalog> extends Omit<AppOptions<C>, 'transport' | 'logger'> {
  /** The broker as a URL (`redis://…`, `amqp://…`, `sqs://…`; the binding package must be installed). Give `url` or `transport`. */
  readonly url?: string | undefined;
  /** The broker as a transport you built (`new RedisTransport({...})`). Give `url` or `transport`. */
  readonly transport?: Transport | undefined;
  /** Deliveries handled at once by the worker. Default 1. */
  readonly concurrency?: number | undefined;
  /**
   * Run a worker on the App's `queue` from application bootstrap to shutdown.
   * Default true; false makes a publish-only module (no `@OnJob` may name it).
   */
  readonly consume?: boolean | undefined;
  /** pino-compatible logger. Default: Nest's `Logger`, context `BabelQueue` (`BabelQueue:<name>` for a named module). */
  readonly logger?: Logger | undefined;
}

/** Options of `BabelQueueModule.forRoot`. */
export interface BabelQueueModuleOptions<C extends UrnCatalog = RegisteredCatalog> extends BabelQueueOptions<C> {
  /** Registers a second (third, …) queue or broker: its client is injected with `@InjectBabelQueue(name)`, its handlers are `@OnJob(urn, { name })`. */
  readonly name?: string | undefined;
}

/** Options of `BabelQueueModule.forRootAsync`: the module's options made by a factory (from `ConfigService`, say). */
export interface BabelQueueModuleAsyncOptions<C extends UrnCatalog = RegisteredCatalog> extends Pick<ModuleMetadata, 'imports'> {
  /** As in `forRoot`; fixed here, since injection tokens are known before any factory runs. */
  readonly name?: string | undefined;
  /** Makes the options; gets the `inject` providers as arguments. */
  readonly useFactory: (...args: never[]) => BabelQueueOptions<C> | Promise<BabelQueueOptions<C>>;
  /** Providers passed to `useFactory` (`[ConfigService]`). */
  readonly inject?: (InjectionToken | OptionalFactoryDependency)[] | undefined;
}
