import type { BindingRules, Delivery, OutgoingMessage, TransportCapabilities } from '@babelqueue/core';

/** A reserving side of one queue, for the consume loop. */
export interface Reserver {
  /** Reserves up to `max` deliveries, waiting at most `waitMs` for the first one. */
  fetch(max: number, waitMs: number, signal: AbortSignal): Promise<Delivery[]>;
  /** Releases what the reserver opened (a blocking connection). */
  close(): void;
}

/** What differs between the two key layouts. */
export interface Layout {
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities;
  /** How long one fetch may wait for the first delivery before the loop looks around again. */
  readonly pollWaitMs: number;
  publish(message: OutgoingMessage): Promise<void>;
  publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>): Promise<void>;
  reserver(queue: string): Reserver;
}
