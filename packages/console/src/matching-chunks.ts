import type { ScannedRecord } from '@babelqueue/core';
import type { RecordFilter } from './filter.js';
import { selectFields } from './search.js';
import type { RecordSource } from './source.js';

/** Records a bulk action over a broker with targeted removal handles per scan. */
const CHUNK = 200;

/** How far {@link eachMatchingChunk} read. */
export interface ChunkScan {
  readonly scanned: number;
  /** It stopped at the scan limit with records left unread (and no chunk stopped it). */
  readonly limited: boolean;
}

/**
 * Hands `act` the records of `dlq` that `filter` selects, at most {@link CHUNK}
 * at a time, until the scan ends or `scanLimit` records were read. `act`
 * answers how many records of its chunk left the list, so the next scan
 * starts where this one stopped less those, or `undefined` to stop there.
 */
export async function eachMatchingChunk(
  source: RecordSource,
  dlq: string,
  filter: RecordFilter,
  scanLimit: number,
  act: (chunk: ScannedRecord[]) => Promise<number | undefined>,
): Promise<ChunkScan> {
  let from = 0;
  let scanned = 0;
  for (;;) {
    const chunk: ScannedRecord[] = [];
    let end = true;
    let next = from;
    for await (const record of source.read(dlq, from)) {
      if (chunk.length === CHUNK || scanned >= scanLimit) {
        end = false;
        break;
      }
      scanned += 1;
      next = record.index + 1;
      if (selectFields(record, filter) !== undefined) chunk.push(record);
    }
    const left = await act(chunk);
    if (left === undefined || end || scanned >= scanLimit) return { scanned, limited: left !== undefined && !end && scanned >= scanLimit };
    from = next - left;
  }
}
