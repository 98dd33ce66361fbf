import type { ScannedRecord, ScanOptions } from '@babelqueue/core';
import { slotGuard } from './errors.js';
import type { RedisClient } from './options.js';

/** Values one `LRANGE` window reads: a scan holds at most two windows in memory (one read ahead). */
export const SCAN_WINDOW = 500;

/** A stored list value read back as the envelope and the headers it carries. */
export type ReadValue = (value: Buffer) => { body: Buffer; headers: Readonly<Record<string, string>> };

/**
 * Reads the list `key` from `offset` on in `LRANGE` windows, oldest first,
 * leaving every value in place; the next window is asked for while the
 * current one is read (two windows at most in memory). Values popped from the head meanwhile (a
 * running consumer) shift the windows: a scan is a read of a moving list, not
 * a snapshot.
 */
export async function* scanList(
  client: RedisClient,
  queue: string,
  key: string,
  options: ScanOptions,
  read: ReadValue,
): AsyncGenerator<ScannedRecord> {
  let index = options.offset ?? 0;
  const windowAt = (start: number) => slotGuard(queue, client.lrangeBuffer(key, start, start + SCAN_WINDOW - 1));
  let pending = windowAt(index);
  try {
    for (;;) {
      if (options.signal?.aborted) return;
      const window = await pending;
      // The next window is read while this one is handed out: the reader's work and the round trip overlap.
      if (window.length === SCAN_WINDOW) pending = windowAt(index + SCAN_WINDOW);
      for (const value of window) {
        if (options.signal?.aborted) return;
        yield { ...read(value), index: index++ };
      }
      if (window.length < SCAN_WINDOW) return;
    }
  } finally {
    // A scan left early leaves at most one window in flight: its answer (or error) is dropped.
    pending.catch(() => undefined);
  }
}

/**
 * Finds the first stored value of `key` whose read-back body is `body` and
 * removes that one value (`LREM key 1 value`). A bare value is tried first in
 * one command; a framed one (legacy layout with headers) is looked up window by
 * window. False when no value holds the body any more.
 */
export async function removeFromList(client: RedisClient, queue: string, key: string, body: Buffer, read: ReadValue): Promise<boolean> {
  if (Number(await slotGuard(queue, client.lrem(key, 1, body))) > 0) return true;
  for (let start = 0; ; start += SCAN_WINDOW) {
    const window = await slotGuard(queue, client.lrangeBuffer(key, start, start + SCAN_WINDOW - 1));
    for (const value of window) {
      if (!value.equals(body) && read(value).body.equals(body)) {
        // LREM of the exact stored value: atomic, and 0 when a consumer took it in between.
        if (Number(await slotGuard(queue, client.lrem(key, 1, value))) > 0) return true;
      }
    }
    if (window.length < SCAN_WINDOW) return false;
  }
}
