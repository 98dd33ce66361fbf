/**
 * The `Transport.scan` / `depth` contract (packages/core/src/transport/transport.ts),
 * run by each binding's own test folder against its real broker: records come
 * from the head, oldest first, from any offset, with their native headers,
 * and reading them changes nothing (the depth stays, a consumer is then handed
 * every record as a first delivery).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EnvelopeCodec, type ScannedRecord, type Transport } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { within } from './until.js';

/** A queue (topic) ready for the binding's `publishRaw`, and its clean-up. */
export interface ScanLab {
  readonly transport: Transport;
  /** A fresh, empty queue the transport can publish to and scan. */
  queue(): Promise<string>;
  close(): Promise<void>;
}

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

async function all(records: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

function bodies(count: number, queue: string): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make('urn:babel:scan:checked', { n: i }, { queue })), 'utf8'));
}

/** Registers the scan/depth tests for one binding (call inside its `describe`). */
export function scanContract(open: () => Promise<ScanLab>): void {
  it('scan reads every record from the head, oldest first, with its headers, from any offset; depth counts them', async () => {
    const lab = await open();
    try {
      const queue = await lab.queue();
      const sent = bodies(3, queue);
      for (const body of sent) await lab.transport.publishRaw!(queue, body, { traceparent: TRACEPARENT });
      const read = await within(all(lab.transport.scan!(queue)), 30_000, `a scan of ${queue}`);
      assert.deepEqual(read.map((r) => r.body.toString()), sent.map((b) => b.toString()), 'every body, byte for byte, in order');
      assert.deepEqual(read.map((r) => r.index), [0, 1, 2]);
      for (const record of read) assert.equal(record.headers.traceparent, TRACEPARENT, 'riders come back as headers');
      const tail = await all(lab.transport.scan!(queue, { offset: 1 }));
      assert.deepEqual(tail.map((r) => [r.index, r.body.toString()]), read.slice(1).map((r) => [r.index, r.body.toString()]), 'offset skips from the head');
      assert.deepEqual(await all(lab.transport.scan!(queue, { offset: 3 })), [], 'past the end: nothing');
      assert.equal(await lab.transport.depth!(queue), 3);
    } finally {
      await lab.close();
    }
  });

  it('reading changes nothing: after a scan ended early and a full one, depth stays and a consumer gets every record as a first delivery', async () => {
    const lab = await open();
    try {
      const queue = await lab.queue();
      const sent = bodies(2, queue);
      for (const body of sent) await lab.transport.publishRaw!(queue, body);
      for await (const record of lab.transport.scan!(queue)) {
        assert.equal(record.index, 0);
        break;
      }
      const controller = new AbortController();
      const aborted: ScannedRecord[] = [];
      for await (const record of lab.transport.scan!(queue, { signal: controller.signal })) {
        aborted.push(record);
        controller.abort();
      }
      assert.equal(aborted.length, 1, 'an aborted scan ends');
      assert.equal((await all(lab.transport.scan!(queue))).length, 2);
      assert.equal(await lab.transport.depth!(queue), 2, 'nothing was taken');
      const got: Delivery[] = [];
      await lab.transport.consume(queue, async (delivery) => {
        got.push(delivery);
        await delivery.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 2, idleMs: 20_000 });
      assert.deepEqual(got.map((d) => d.body.toString()), sent.map((b) => b.toString()), 'both still there, in order');
      for (const delivery of got) assert.equal(delivery.reconcileAttempts(0), 0, 'no delivery was counted by the scans');
    } finally {
      await lab.close();
    }
  });

  it('a queue nobody wrote to scans as empty, depth 0', async () => {
    const lab = await open();
    try {
      const queue = await lab.queue();
      assert.deepEqual(await all(lab.transport.scan!(queue)), []);
      assert.equal(await lab.transport.depth!(queue), 0);
    } finally {
      await lab.close();
    }
  });
}
