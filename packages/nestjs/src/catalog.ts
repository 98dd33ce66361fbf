import type { UntypedCatalog, UrnOf } from '@babelqueue/core';

/**
 * The application's URN catalog, for `@OnJob` and `BabelQueueClient`: empty
 * here, filled by the application with a module augmentation (URNs are global
 * names, so one catalog serves every queue and broker of the app):
 *
 * @example
 * ```ts
 * declare module '@babelqueue/nestjs' {
 *   interface BabelQueueCatalog {
 *     'urn:babel:orders:created': { order_id: number };
 *   }
 * }
 * ```
 *
 * Left empty, any URN is accepted and each handler names its payload type.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface BabelQueueCatalog {}

/** The catalog the application registered, or core's untyped catalog when it registered none. */
export type RegisteredCatalog = [UrnOf<BabelQueueCatalog>] extends [never] ? UntypedCatalog : BabelQueueCatalog;
