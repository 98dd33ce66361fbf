import type { Envelope } from '../envelope/types.js';
import type { DecisionKind } from '../settlement/decision.js';
import type { OutcomeKind } from '../settlement/outcome.js';
import type { HeaderValue } from '../transport/transport.js';
import type { Message } from './message.js';

/**
 * Hooks around the App's two paths — one publish, one delivery — for tracing
 * and metrics (`@babelqueue/otel` is one). Set once as `createApp({
 * instrumentation })`. The App calls them and nothing else: an App without
 * instrumentation runs no hook code and allocates nothing for it.
 *
 * A hook must not throw; one that does is logged and ignored, and never
 * changes how a message is settled.
 */
export interface Instrumentation {
  /** One `app.publish`, after its options were checked and before the envelope is built. */
  readonly publish?: (start: PublishStart) => PublishScope | undefined;
  /** One delivery, as the runtime takes it from the transport (before the body is looked at). */
  readonly delivery?: (start: DeliveryStart) => DeliveryScope | undefined;
}

/** What a publish is about to send. */
export interface PublishStart {
  readonly urn: string;
  readonly queue: string;
  /** The caller's `traceId` option, when given. */
  readonly traceId?: string;
  /** The caller's riders, when given. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the instrumentation adds to one publish, and how it learns the result. */
export interface PublishScope {
  /** The `trace_id` to stamp when the caller named none (e.g. the UUID form of the producer span's trace). */
  readonly traceId?: string;
  /** Riders to carry in native metadata (traceparent, tracestate); the caller's own headers win a clash. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called once: with the envelope after the broker took it, or with the error the publish failed with. */
  end(result: PublishResult): void;
}

/** How one publish ended. */
export type PublishResult =
  | { readonly envelope: Envelope; readonly error?: undefined }
  | { readonly envelope?: Envelope; readonly error: unknown };

/** A delivery the runtime has just taken. */
export interface DeliveryStart {
  readonly queue: string;
  /** Native metadata as received (traceparent, …). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly bytes: number;
}

/** Follows one delivery from its start to the settlement the runtime executed. */
export interface DeliveryScope {
  /**
   * Runs the handler: call `invoke` exactly once and return what it returns
   * (it never rejects). Wrap it to make a span current for the handler, or to
   * time it. Called only for a decoded message whose URN has a handler.
   */
  handle?<T>(message: Message, invoke: () => Promise<T>): Promise<T>;
  /** Called exactly once, after the runtime settled the delivery (or left it unsettled). */
  settled(end: DeliveryEnd): void;
}

/** What the runtime did with one delivery: its real decision, not a guess. */
export interface DeliveryEnd {
  readonly queue: string;
  /**
   * What happened before settlement (`handled`, `failed`, `poison`,
   * `unknown-urn`, `version-gated`, `interrupted`), or `unexpected-error` when
   * the runtime itself failed (the delivery is then left unsettled).
   */
  readonly outcome: OutcomeKind | 'unexpected-error';
  /**
   * The decision the transport executed. A dead-letter whose record could not
   * be written ends as `unsettled` with `deadLetterWriteFailed`.
   */
  readonly decision: DecisionKind;
  /** For `dead-letter` and `drop`: the `dead_letter.reason` (`failed`, `unknown_urn`, `poison`, `version_gate`). */
  readonly reason?: string;
  /** The counted attempt of this delivery (1 on the first; 0 after an unexpected error). */
  readonly attempts: number;
  /** The decoded message, when the body was an accepted envelope. */
  readonly message?: Message;
  /** What the handler threw (or the timeout error), on a `failed` outcome. */
  readonly error?: unknown;
  /** The dead-letter record could not be written; the delivery was left for redelivery. */
  readonly deadLetterWriteFailed?: boolean;
  /** The transport refused the settlement; the broker will redeliver. */
  readonly settleFailed?: boolean;
}
