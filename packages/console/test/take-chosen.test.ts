import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryTransport, type ConsumeOptions } from '@babelqueue/core';
import { type Delivery, type RawPublishOptions } from '@babelqueue/core/binding';
import { recordHash } from '../src/records.js';
import { takeChosen } from '../src/take-chosen.js';

const DLQ = 'orders.dlq';

/** Marks an empty body as a null value, as the Kafka binding does for a tombstone, and records each raw write. */
class TombstoneTransport extends InMemoryTransport {
  readonly writes: { body: string; options: RawPublishOptions | undefined }[] = [];

  override consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    return super.consume(queue, (d) => onDelivery({
      body: d.body,
      queue: d.queue,
      headers: d.headers,
      key: d.key ?? null,
      nullValue: d.body.length === 0,
      nativeAttempts: d.nativeAttempts,
      settle: (decision) => d.settle(decision),
    }), options);
  }

  override async publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>, options?: RawPublishOptions): Promise<void> {
    this.writes.push({ body: body.toString(), options });
    await super.publishRaw(queue, body, headers, options);
  }
}

describe('takeChosen (act on chosen records by take-and-restore)', () => {
  it('writes a null value (a Kafka tombstone) taken ahead of the deleted record back as null, with its key', async () => {
    const transport = new TombstoneTransport();
    const key = Buffer.from('k');
    const wanted = Buffer.from('{"wanted":1}');
    await transport.publishRaw(DLQ, Buffer.alloc(0), {}, { key });
    await transport.publishRaw(DLQ, Buffer.from('{"kept":1}'), {}, { key: null });
    await transport.publishRaw(DLQ, wanted, {}, { key: null });
    transport.writes.length = 0;
    const result = await takeChosen(transport, DLQ, new Map([[recordHash(wanted), 1]]), { max: 3, idleMs: 100 }, (d) => d.settle({ kind: 'ack' }));
    assert.deepEqual([result.done, result.restored], [[recordHash(wanted)], 2]);
    assert.deepEqual(transport.writes, [
      { body: '', options: { key, nullValue: true } },
      { body: '{"kept":1}', options: { key: null } },
    ], 'only the null value is written back as null');
  });
});
