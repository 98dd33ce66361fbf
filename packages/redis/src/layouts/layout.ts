import type { BindingRules, OutgoingMessage, TransportCapabilities } from '@babelqueue/core';
import type { Reserver } from '../consume/reserver.js';

/** What differs between the two key layouts. */
export interface Layout {
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities;
  /** How long the consume loop waits for work after an empty reserve before it looks again. */
  readonly pollWaitMs: number;
  publish(message: OutgoingMessage): Promise<void>;
  publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>): Promise<void>;
  reserver(queue: string): Reserver;
}
