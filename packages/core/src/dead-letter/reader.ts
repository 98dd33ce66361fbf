import type { ScanKind, ScannedRecord, Transport } from '../transport/transport.js';

/**
 * How a dead-letter reader reads a queue: through the binding's `scan`, which
 * either peeks (`peek`: nothing changes on the broker) or leases (`leased`:
 * each record is received and given back when the read ends), or not at all
 * (`none`: the binding cannot read without consuming).
 */
export type DeadLetterReadMode = ScanKind | 'none';

/** Options of {@link deadLetterReader}. */
export interface DeadLetterReaderOptions {
  /** Handed to every scan: read even where a read counts a delivery of each record (see `ScanOptions.allowCountedReads`). */
  readonly allowCountedReads?: boolean;
}

/** The first records of a dead-letter queue, with how many wait in all. */
export interface DeadLetterListing {
  readonly records: ScannedRecord[];
  /** How many records wait, as the broker counts them; null where the binding cannot tell. */
  readonly depth: number | null;
  /**
   * True when `records` may not be the whole queue: the listing stopped at
   * `max`, or the broker counts more than were read (records held by a
   * consumer or an earlier read are not readable until they come back).
   */
  readonly partial: boolean;
}

/**
 * One reader of dead-letter queues for every tool (the CLI's `dlq list` and
 * `dlq show`, the console's pages and actions), over the Transport contract's
 * `scan` and `depth`. A read is a scan from an offset; `list` reads to the end
 * (or `max`), so a listing is never one drain round taken for the whole.
 */
export interface DeadLetterReader {
  readonly mode: DeadLetterReadMode;
  /** Records from `offset` on, oldest first. Throws {@link CannotReadError} in `none` mode. */
  read(queue: string, offset?: number, signal?: AbortSignal): AsyncIterable<ScannedRecord>;
  /** How many records wait, or null when the binding cannot tell. */
  depth(queue: string): Promise<number | null>;
  /** Up to `max` records from the head, the depth, and whether the listing is partial. */
  list(queue: string, max: number): Promise<DeadLetterListing>;
}

/** The binding has no `scan`: it cannot read a queue without consuming it. */
export class CannotReadError extends Error {
  override readonly name = 'CannotReadError';
  constructor(readonly binding: string) {
    super(`the ${binding} binding cannot read a queue without consuming it (its transport has no scan), so records cannot be listed; redrive and purge still work where it supports them`);
  }
}

/** The dead-letter reader of `transport`. */
export function deadLetterReader(transport: Transport, options: DeadLetterReaderOptions = {}): DeadLetterReader {
  const depth = async (queue: string) => (typeof transport.depth === 'function' ? transport.depth(queue) : null);
  const counted = options.allowCountedReads === true ? { allowCountedReads: true } : {};
  if (typeof transport.scan !== 'function') {
    return {
      mode: 'none',
      depth,
      read() {
        throw new CannotReadError(transport.rules.name);
      },
      list() {
        return Promise.reject(new CannotReadError(transport.rules.name));
      },
    };
  }
  const scan = transport.scan.bind(transport);
  const read = (queue: string, offset = 0, signal?: AbortSignal) => scan(queue, { offset, ...(signal ? { signal } : {}), ...counted });
  return {
    mode: transport.capabilities.scan ?? 'peek',
    depth,
    read,
    async list(queue, max) {
      const records: ScannedRecord[] = [];
      let more = false;
      for await (const record of read(queue, 0)) {
        if (records.length === max) {
          more = true;
          break;
        }
        records.push(record);
      }
      const waiting = await depth(queue);
      return { records, depth: waiting, partial: more || (waiting !== null && waiting > records.length) };
    },
  };
}
