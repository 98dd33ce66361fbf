import type { Message, UntypedCatalog, UrnOf } from '@babelqueue/core';
import type { RegisteredCatalog } from './catalog.js';
import { DEFAULT_NAME } from './tokens.js';

/** Where `@OnJob` keeps its registrations: on the decorated method's function. */
export const ON_JOB_METADATA = 'babelqueue:on-job';

/** Options of {@link OnJob}. */
export interface OnJobOptions {
  /** The `BabelQueueModule` (its `name`) whose worker runs this handler. Default `"default"`. */
  readonly name?: string | undefined;
}

/** One `@OnJob` on a method, as read back at bootstrap. */
export interface OnJobRegistration {
  readonly urn: string;
  readonly name: string;
}

/** A URN `@OnJob` accepts: the registered catalog's, or any string without one. */
export type JobUrn = RegisteredCatalog extends UntypedCatalog ? string : UrnOf<RegisteredCatalog>;

/**
 * The method `@OnJob(urn)` may decorate: it must accept the catalog's payload
 * for `urn` (without a catalog, any payload type it names).
 */
export type JobMethod<U extends string> = RegisteredCatalog extends UntypedCatalog
  ? (data: never, message: never) => unknown
  : U extends UrnOf<RegisteredCatalog>
    ? (data: RegisteredCatalog[U], message: Message<RegisteredCatalog[U]>) => unknown
    : never;

/**
 * Declares a provider method the handler of `urn` on a `BabelQueueModule`'s
 * worker (`options.name`, default the unnamed one). The method gets the
 * envelope's `data` and the `Message`; returning acknowledges, throwing takes
 * the retry / dead-letter path. A method may carry several `@OnJob`s; one URN
 * has one handler per module.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class OrdersHandler {
 *   constructor(private readonly orders: OrdersService) {}
 *
 *   @OnJob('urn:babel:orders:created')
 *   async created(data: OrderCreated, message: Message<OrderCreated>) {
 *     await this.orders.record(data.order_id, message.id);
 *   }
 * }
 * ```
 */
export function OnJob<U extends JobUrn>(urn: U, options: OnJobOptions = {}) {
  const registration: OnJobRegistration = { urn, name: options.name ?? DEFAULT_NAME };
  return <M extends JobMethod<U>>(_target: object, _key: string | symbol, descriptor: TypedPropertyDescriptor<M>): void => {
    const method = descriptor.value as object;
    const existing = (Reflect.getMetadata(ON_JOB_METADATA, method) as OnJobRegistration[] | undefined) ?? [];
    Reflect.defineMetadata(ON_JOB_METADATA, [...existing, registration], method);
  };
}

/** The `@OnJob` registrations on a method, in declaration order (none: an empty list). */
export function onJobRegistrations(method: unknown): readonly OnJobRegistration[] {
  if (typeof method !== 'function') return [];
  const found = Reflect.getMetadata(ON_JOB_METADATA, method) as OnJobRegistration[] | undefined;
  // Decorators apply bottom-up; the first one written comes first.
  return found === undefined ? [] : [...found].reverse();
}
