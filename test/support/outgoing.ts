import { EnvelopeCodec, type OutgoingMessage } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';

/** Options of {@link outgoingBatch}. */
export interface OutgoingBatchOptions {
  readonly urn?: string;
  readonly delayMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly key?: Buffer | null;
}

/**
 * `count` messages for `queue` as the App builds them (a fresh envelope each,
 * data `{ n }`), for comparing `publishMany` with single publishes of the very
 * same messages.
 */
export function outgoingBatch(queue: string, count: number, options: OutgoingBatchOptions = {}): OutgoingMessage[] {
  return Array.from({ length: count }, (_, n) => {
    const envelope = EnvelopeCodec.make(options.urn ?? 'urn:babel:orders:created', { n }, { queue });
    return {
      body: Buffer.from(EnvelopeCodec.encode(envelope), 'utf8'),
      queue,
      projection: envelopeProjection(envelope),
      ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
      ...(options.key !== undefined ? { key: options.key } : {}),
    };
  });
}

/** The same messages aimed at another queue (bodies and metadata unchanged). */
export function retarget(messages: readonly OutgoingMessage[], queue: string): OutgoingMessage[] {
  return messages.map((m) => ({ ...m, queue }));
}
