import type { OutgoingMessage, PublishOutcome, ScannedRecord, ScanOptions, TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';
import type { Reserver } from '../consume/reserver.js';

/** What differs between the two key layouts. */
export interface Layout {
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities;
  /** How long the consume loop waits for work after an empty reserve before it looks again. */
  readonly pollWaitMs: number;
  publish(message: OutgoingMessage): Promise<void>;
  /** The batch as one write per queue (see `publishInGroups`). */
  publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]>;
  publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>): Promise<void>;
  reserver(queue: string): Reserver;
  /** Up to `max` envelope bodies from the head of the ready list, left in place. */
  browse(queue: string, max: number): Promise<Buffer[]>;
  /** Deletes the waiting messages (never the reservations); resolves with how many. */
  purge(queue: string): Promise<number>;
  /** The ready list from `offset` on, in `LRANGE` windows, left in place. */
  scan(queue: string, options: ScanOptions): AsyncGenerator<ScannedRecord>;
  /** The ready list's length. */
  depth(queue: string): Promise<number>;
  /** Removes one ready value holding `body` (`LREM`). */
  remove(queue: string, body: Buffer): Promise<boolean>;
}
