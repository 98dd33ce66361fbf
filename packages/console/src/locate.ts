import type { ScannedRecord } from '@babelqueue/core';
import { recordHash } from './records.js';
import type { RecordSource } from './source.js';

/** How the page names a record in an action: where it was seen and the fingerprint of its bytes. */
export interface RecordRef {
  readonly index: number;
  readonly hash: string;
}

/**
 * Finds the records `refs` name, by their bytes' fingerprint: first in one
 * pass over the positions they were seen at, then, if any was not found there
 * (records ahead of them left or were restored meanwhile), all of them again
 * in one pass from the head up to `scanLimit`. Positions of two passes are
 * never compared: a leased scan (SQS) receives in another order each time, so
 * the same position can hold another record. Within a pass each record is
 * read once, so each ref matches its own record; repeated bytes need repeated
 * refs. Only the found records are kept.
 */
export async function locate(source: RecordSource, dlq: string, refs: readonly RecordRef[], scanLimit: number): Promise<Map<RecordRef, ScannedRecord>> {
  if (refs.length === 0) return new Map();
  const first = Math.min(...refs.map((r) => r.index));
  const last = Math.max(...refs.map((r) => r.index));
  const near = await pass(first, last - first + 1);
  return near.size === refs.length ? near : pass(0, scanLimit);

  async function pass(from: number, count: number): Promise<Map<RecordRef, ScannedRecord>> {
    const found = new Map<RecordRef, ScannedRecord>();
    let read = 0;
    for await (const record of source.read(dlq, from)) {
      const hash = recordHash(record.body);
      const ref = refs.find((r) => !found.has(r) && r.hash === hash);
      if (ref !== undefined) found.set(ref, record);
      read += 1;
      if (found.size === refs.length || read >= count) break;
    }
    return found;
  }
}
