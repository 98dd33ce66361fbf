// Finding chosen records again for an action, on a source whose scans come in
// another order each time: SQS's leased scan numbers records in the order of
// that scan's receives, and ElasticMQ hands released messages back after the
// ones never leased (a CI run once redrove 1 of 2 chosen records this way).
// The order cannot be forced on the lab's ElasticMQ, so the source here is a
// list read in a given order per scan.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScannedRecord } from '@babelqueue/core';
import { locate } from '../src/locate.js';
import { recordHash } from '../src/records.js';
import type { RecordSource } from '../src/source.js';

/** A source whose n-th scan yields the records in `orders[n]`, indexed by their place in that scan (as SQS's scan does). */
function shuffling(orders: readonly (readonly string[])[]): { source: RecordSource; scans: () => number } {
  let scans = 0;
  const source = {
    async *read(_dlq: string, from: number): AsyncGenerator<ScannedRecord> {
      const order = orders[Math.min(scans, orders.length - 1)]!;
      scans += 1;
      for (const [index, body] of order.entries()) {
        if (index >= from) yield { body: Buffer.from(body), headers: {}, index };
      }
    },
  } as unknown as RecordSource;
  return { source, scans: () => scans };
}

const ref = (body: string, index: number) => ({ index, hash: recordHash(Buffer.from(body)) });

describe('locate: chosen records found again by their bytes', () => {
  it('a scan in another order: the pass from the head matches by bytes, never by a position an earlier pass saw', async () => {
    const { source, scans } = shuffling([
      // The near pass (from index 1, three records) finds D only, at index 1.
      ['A', 'D', 'C', 'E', 'B', 'F'],
      // The pass from the head holds B at index 1, the position D had in the near pass.
      ['E', 'B', 'F', 'A', 'D', 'C'],
    ]);
    const refs = [ref('B', 1), ref('D', 3)];
    const found = await locate(source, 'dlq', refs, 100);
    assert.equal(scans(), 2);
    assert.deepEqual(refs.map((r) => found.get(r)?.body.toString()), ['B', 'D'], 'each chosen record found, by its own bytes');
  });

  it('records seen where the page saw them: one pass over those positions', async () => {
    const { source, scans } = shuffling([['A', 'B', 'C', 'D']]);
    const refs = [ref('B', 1), ref('C', 2)];
    const found = await locate(source, 'dlq', refs, 100);
    assert.equal(scans(), 1);
    assert.deepEqual(refs.map((r) => found.get(r)?.index), [1, 2]);
  });

  it('repeated bytes: each ref takes a record of its own', async () => {
    const { source } = shuffling([['X', 'Y'], ['Y', 'X', 'X']]);
    const refs = [ref('X', 0), ref('X', 1)];
    const found = await locate(source, 'dlq', refs, 100);
    assert.deepEqual(refs.map((r) => found.get(r)?.index), [1, 2], 'two distinct records of the second scan');
  });

  it('a record gone from the DLQ is not found, the others are', async () => {
    const { source } = shuffling([['A', 'C'], ['C', 'A']]);
    const refs = [ref('B', 1), ref('C', 1)];
    const found = await locate(source, 'dlq', refs, 100);
    assert.equal(found.get(refs[0]!), undefined);
    assert.equal(found.get(refs[1]!)?.body.toString(), 'C');
  });
});
