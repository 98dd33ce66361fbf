import type { RetryBackoff } from '../settlement/policy-config.js';
import type { UnknownUrnStrategyValue } from '../settlement/unknown-urn-strategy.js';
import type { Transport } from '../transport/transport.js';
import type { Instrumentation } from './instrumentation.js';
import type { Logger } from './logger.js';
import type { DropEvent, FailedEvent } from './delivery-processor.js';
import type { UrnCatalog } from './message.js';

// The App's options on their own, so the settings check and the start-up
// checks read them without importing the App (no import circle).

/** The catalog of an App created without one: any URN, any object payload. */
declare const untyped: unique symbol;
export interface UntypedCatalog {
  readonly [untyped]: true;
}

/** The URNs of a catalog. */
export type UrnOf<C> = Extract<keyof C, string>;

/** The `data` a message of the catalog can carry: the union of its payload types (any object without a catalog). */
export type CatalogData<C> = C extends UntypedCatalog ? Record<string, unknown> : [UrnOf<C>] extends [never] ? Record<string, unknown> : C[UrnOf<C>];

/** Dead-lettering settings: `true` for `<queue>.dlq`, or an explicit queue / suffix. */
export interface DeadLetterOptions {
  /** Write every record to this queue instead of `<queue><suffix>`. Must differ from the consumed queue. */
  readonly queue?: string | undefined;
  /** Suffix appended to the consumed queue's name. Default `.dlq` (`-dlq` on SQS). Must not be empty. */
  readonly suffix?: string | undefined;
  /**
   * Also write the failing Error's `stack` as `dead_letter.stack`, an additive
   * member after the seven of the spec (Node's own text; other SDKs ignore it
   * and a redrive drops it with the block). Off by default: a stack names
   * source paths and may quote the error message.
   */
  readonly stack?: boolean | undefined;
}

/** Options of {@link createApp}. Unknown keys are refused (a plain-JavaScript typo fails at start-up). */
export interface AppOptions<C extends UrnCatalog = UntypedCatalog> {
  /** The broker binding. */
  readonly transport: Transport;
  /** The queue published to and consumed from when a call names none. Default `"default"`. */
  readonly queue?: string | undefined;
  /** Total deliveries a message gets, the first included; 1 = no retry; 0 = no cap. Default 3. */
  readonly maxAttempts?: number | undefined;
  /** The unknown-URN strategy. Default `fail`. */
  readonly onUnknownUrn?: UnknownUrnStrategyValue | undefined;
  /** Delay before an unknown URN under `release` is delivered again, in ms. Default 0. */
  readonly unknownUrnReleaseDelayMs?: number | undefined;
  /**
   * Dead-lettering. **Off by default** (the specification's default): a message
   * that still fails after `maxAttempts` is then dropped, with an ERROR log line.
   * `true` keeps it in `<queue>.dlq` (`<queue>-dlq` on SQS); or `{ queue, suffix }`.
   */
  readonly deadLetter?: boolean | DeadLetterOptions | undefined;
  /** Retry delay `min(maxMs, baseMs * multiplier^(n-1))`; default 0 ms (redeliver at once). */
  readonly retryBackoff?: Partial<RetryBackoff> | undefined;
  /** A body larger than this many bytes is poison. Default: no limit. */
  readonly maxBodyBytes?: number | undefined;
  /**
   * A handler still running after this many ms is failed (retry path) and its
   * `message.signal` aborted. Must be below the transport's reservation (Redis
   * `retryAfter`, SQS visibility timeout, …). Default: no timeout.
   */
  readonly handlerTimeoutMs?: number | undefined;
  /**
   * On shutdown, how long in-flight handlers may run on before they are
   * interrupted and their messages left unsettled for redelivery. Default
   * 25,000 ms (inside Kubernetes' 30 s grace period).
   */
  readonly shutdownTimeoutMs?: number | undefined;
  /** How long `run()`/`consume()` wait for the broker at start-up before failing with a `ConnectError`. Default 10,000 ms. */
  readonly connectTimeoutMs?: number | undefined;
  /** pino-compatible logger. Default: one line per event on stderr. Bodies are never logged. */
  readonly logger?: Logger | undefined;
  /** The `failed(...)` hook: runs when a message will not be retried again, before it is dead-lettered or dropped. */
  readonly onFailed?: ((event: FailedEvent<CatalogData<C>>) => unknown) | undefined;
  /** Called for every message acknowledged without a record (after the log line). */
  readonly onDrop?: ((event: DropEvent) => unknown) | undefined;
  /**
   * Hooks around each publish and each delivery, for tracing and metrics (for
   * example `otelInstrumentation()` from `@babelqueue/otel`). Default none.
   */
  readonly instrumentation?: Instrumentation | undefined;
}
