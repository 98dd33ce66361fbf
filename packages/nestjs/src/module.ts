import { ConfigurationError, createApp, DEFAULT_QUEUE, transportFromUrl, type App, type AppOptions, type Transport } from '@babelqueue/core';
import { Module, type DynamicModule, type FactoryProvider, type Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { RegisteredCatalog } from './catalog.js';
import { BabelQueueClient } from './client.js';
import { nestLogger } from './nest-logger.js';
import type { BabelQueueModuleAsyncOptions, BabelQueueModuleOptions, BabelQueueOptions } from './options.js';
import { DEFAULT_NAME, getBabelQueueClientToken, getBabelQueueOptionsToken, getBabelQueueWorkerToken } from './tokens.js';
import { BabelQueueWorker } from './worker.js';

/** One module's App and what its worker needs, made once from the options. */
interface Resolved {
  readonly app: App;
  readonly options: BabelQueueOptions;
  readonly logger: NonNullable<BabelQueueOptions['logger']>;
}

/**
 * BabelQueue in a NestJS application. `forRoot` / `forRootAsync` register one
 * App (a broker and a queue) as a global module: its `BabelQueueClient` is
 * injectable everywhere, `@OnJob` provider methods are its handlers, its
 * worker starts on application bootstrap and drains on shutdown. Register the
 * module again with a `name` for another queue or broker.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [BabelQueueModule.forRoot({ url: 'redis://127.0.0.1:6379', queue: 'orders', deadLetter: true, concurrency: 8 })],
 *   providers: [OrdersService, OrdersHandler],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class BabelQueueModule {
  /** Registers an App from options known at import time. */
  static forRoot(options: BabelQueueModuleOptions): DynamicModule {
    const { name = DEFAULT_NAME, ...rest } = options ?? ({} as BabelQueueModuleOptions);
    return BabelQueueModule.build(checkName(name), {
      provide: getBabelQueueOptionsToken(name),
      useFactory: () => resolve(name, rest as BabelQueueOptions),
    });
  }

  /**
   * Registers an App whose options a factory makes, typically from
   * `ConfigService` (`imports: [ConfigModule]`, `inject: [ConfigService]`).
   */
  static forRootAsync(options: BabelQueueModuleAsyncOptions): DynamicModule {
    const name = checkName(options.name ?? DEFAULT_NAME);
    if (typeof options.useFactory !== 'function') {
      throw new ConfigurationError(`BabelQueueModule.forRootAsync "${name}" needs a useFactory function`);
    }
    const module = BabelQueueModule.build(name, {
      provide: getBabelQueueOptionsToken(name),
      useFactory: async (...args: unknown[]) => resolve(name, await options.useFactory(...(args as never[]))),
      inject: options.inject ?? [],
    });
    return { ...module, imports: [...(module.imports ?? []), ...(options.imports ?? [])] };
  }

  private static build(name: string, resolved: FactoryProvider<Promise<Resolved> | Resolved>): DynamicModule {
    const client: Provider = {
      provide: getBabelQueueClientToken(name),
      useFactory: (r: Resolved) => new BabelQueueClient(r.app as unknown as App<RegisteredCatalog>, name),
      inject: [resolved.provide],
    };
    const worker: Provider = {
      provide: getBabelQueueWorkerToken(name),
      useFactory: (r: Resolved, discovery: DiscoveryService, scanner: MetadataScanner, moduleRef: ModuleRef) => new BabelQueueWorker({
        name,
        app: r.app,
        queue: r.options.queue ?? DEFAULT_QUEUE,
        logger: r.logger,
        consume: r.options.consume !== false,
        concurrency: r.options.concurrency,
        connectTimeoutMs: r.options.connectTimeoutMs,
      }, discovery, scanner, moduleRef),
      inject: [resolved.provide, DiscoveryService, MetadataScanner, ModuleRef],
    };
    const providers: Provider[] = [resolved, client, worker];
    const exports: NonNullable<DynamicModule['exports']> = [getBabelQueueClientToken(name)];
    if (name === DEFAULT_NAME) {
      providers.push({ provide: BabelQueueClient, useExisting: getBabelQueueClientToken(name) });
      exports.push(BabelQueueClient);
    }
    return { module: BabelQueueModule, global: true, imports: [DiscoveryModule], providers, exports };
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError(`BabelQueueModule: name must be a non-blank string, got ${typeof name === 'string' ? '""' : typeof name}`);
  }
  return name;
}

/** Makes the module's App: the transport from `url` or `transport`, every other key checked by `createApp`. */
async function resolve(name: string, options: BabelQueueOptions): Promise<Resolved> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigurationError(`BabelQueueModule "${name}": the options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  // The module's own keys; every other key goes to createApp, which refuses unknown ones.
  const { url, transport: given, concurrency: _c, consume: _k, logger: customLogger, ...appOptions } = options;
  if ((url === undefined) === (given === undefined)) {
    throw new ConfigurationError(`BabelQueueModule "${name}" needs exactly one of url and transport, got ${url === undefined ? 'neither' : 'both'}`);
  }
  if ('name' in appOptions) {
    throw new ConfigurationError(`BabelQueueModule "${name}": give name beside useFactory, not in the options it returns`);
  }
  const logger = customLogger ?? nestLogger(name === DEFAULT_NAME ? 'BabelQueue' : `BabelQueue:${name}`);
  const transport: Transport = given ?? await transportFromUrl(url as string);
  try {
    const app = createApp({ ...(appOptions as Omit<AppOptions, 'transport'>), transport, logger });
    return { app, options, logger };
  } catch (error) {
    if (given === undefined) await transport.close().catch(() => undefined);
    if (error instanceof ConfigurationError) throw new ConfigurationError(`BabelQueueModule "${name}": ${error.message}`, { cause: error });
    throw error;
  }
}
