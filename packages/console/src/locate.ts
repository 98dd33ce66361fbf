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
 * pass over the positions they were seen at, then, for any not found there
 * (records ahead of them left or were restored meanwhile), one pass from the
 * head up to `scanLimit`. Each ref matches one record; repeated bytes need
 * repeated refs. Only the found records are kept.
 */
export async function locate(source: RecordSource, dlq: string, refs: readonly RecordRef[], scanLimit: number): Promise<Map<RecordRef, ScannedRecord>> {
  const found = new Map<RecordRef, ScannedRecord>();
  if (refs.length === 0) return found;
  const first = Math.min(...refs.map((r) => r.index));
  const last = Math.max(...refs.map((r) => r.index));
  await pass(first, last - first + 1);
  if (found.size < refs.length) await pass(0, scanLimit);
  return found;

  async function pass(from: number, count: number): Promise<void> {
    const taken = new Set(found.values());
    let read = 0;
    for await (const record of source.read(dlq, from)) {
      const hash = recordHash(record.body);
      const ref = refs.find((r) => !found.has(r) && r.hash === hash);
      if (ref !== undefined && ![...taken].some((t) => t.index === record.index)) {
        found.set(ref, record);
        taken.add(record);
      }
      read += 1;
      if (found.size === refs.length || read >= count) return;
    }
  }
}
