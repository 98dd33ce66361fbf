import type { ScannedRecord, Transport } from '@babelqueue/core';

/**
 * How the console reads a DLQ through the Transport contract:
 * - `scan`: the binding implements `scan` (and `depth`): any page, any depth,
 *   one batch in memory;
 * - `browse`: only the older `browse(queue, max)`: the first `browseMax`
 *   records from the head, no more;
 * - `none`: the binding cannot read without consuming; the page says so.
 */
export type ReadMode = 'scan' | 'browse' | 'none';

/** The console's view of one transport's reading abilities. */
export interface RecordSource {
  readonly mode: ReadMode;
  /** Records from `offset` on, oldest first. Throws {@link CannotReadError} in `none` mode. */
  read(dlq: string, offset: number, signal?: AbortSignal): AsyncIterable<ScannedRecord>;
  /** How many records wait, or null when the binding cannot tell. */
  depth(dlq: string): Promise<number | null>;
}

/** The binding has neither `scan` nor `browse`. */
export class CannotReadError extends Error {
  override readonly name = 'CannotReadError';
  constructor(binding: string) {
    super(`the ${binding} binding cannot read a queue without consuming it (no scan or browse in its transport), so records cannot be listed here; redrive-all and purge still work where it supports them`);
  }
}

/**
 * The reading abilities of `transport`; `browseMax` bounds the browse-only
 * fallback. `allowCountedReads` is handed to every read: without it a binding
 * whose read would count a delivery of each record (a RabbitMQ quorum queue)
 * refuses with a `CountedReadError`, which the API answers with 409.
 */
export function recordSource(transport: Transport, browseMax: number, allowCountedReads = false): RecordSource {
  const depth = async (dlq: string) => (typeof transport.depth === 'function' ? transport.depth(dlq) : null);
  const counted = allowCountedReads ? { allowCountedReads: true } : {};
  if (typeof transport.scan === 'function') {
    const scan = transport.scan.bind(transport);
    return { mode: 'scan', depth, read: (dlq, offset, signal) => scan(dlq, { offset, ...(signal ? { signal } : {}), ...counted }) };
  }
  // A binding may browse with native metadata too (SQS: its `bq-*` attributes); the records then show them.
  const browseRecords = (transport as { browseRecords?: (queue: string, max: number) => Promise<ScannedRecord[]> }).browseRecords?.bind(transport);
  if (browseRecords !== undefined) {
    return {
      mode: 'browse',
      depth,
      async *read(dlq, offset) {
        const records = await browseRecords(dlq, browseMax);
        for (let index = offset; index < records.length; index++) yield { ...(records[index] as ScannedRecord), index };
      },
    };
  }
  if (typeof transport.browse === 'function') {
    const browse = transport.browse.bind(transport);
    return {
      mode: 'browse',
      depth,
      async *read(dlq, offset) {
        const bodies = await browse(dlq, browseMax, counted);
        for (let index = offset; index < bodies.length; index++) yield { body: bodies[index] as Buffer, headers: {}, index };
      },
    };
  }
  return {
    mode: 'none',
    depth,
    read() {
      throw new CannotReadError(transport.rules.name);
    },
  };
}
