import type { App } from '@babelqueue/core';
import type { RegisteredCatalog } from './catalog.js';

/**
 * The publish side of a `BabelQueueModule`, injectable anywhere (the module is
 * global): `constructor(private readonly queue: BabelQueueClient) {}`, then
 * `await this.queue.publish('urn:babel:orders:created', { order_id: 1042 })`.
 * A named module's client is injected with `@InjectBabelQueue(name)`.
 * `publish` and `publishMany` are the App's, typed by the registered catalog
 * (`BabelQueueCatalog`; the class takes no type argument, so `app.get(BabelQueueClient)`
 * is typed the same way).
 */
export class BabelQueueClient {
  /** Builds, encodes and publishes one envelope; resolves with its `meta.id` once the broker has it. */
  readonly publish: App<RegisteredCatalog>['publish'];
  /** Publishes one envelope per payload in one batch; see `App.publishMany`. */
  readonly publishMany: App<RegisteredCatalog>['publishMany'];

  /** @param app the module's App (its `transport`, `process`, …). @param name the module's name. */
  constructor(readonly app: App<RegisteredCatalog>, readonly name: string) {
    this.publish = app.publish;
    this.publishMany = app.publishMany;
  }

  /** The DLQ name of `queue` (default the module's queue). */
  deadLetterQueueName(queue?: string): string {
    return this.app.deadLetterQueueName(queue);
  }
}
