import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createApp } from '@babelqueue/core';
import { BATCH_BYTES, GatheredSends, type EntryAnswer, type Prepared, type SendCalls } from '../src/gathered-sends.js';
import type { QueueInfo } from '../src/queues.js';
import { CREDENTIALS, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
const INFO = { name: 'q', url: 'http://sqs/q', fifo: false } as QueueInfo;
const prepared = (n: number, bytes = 100): Prepared => ({ fields: { MessageBody: String(n) }, bytes });
const nOf = (p: Prepared) => Number(p.fields.MessageBody);

/** Send calls that record what they were given and answer each entry with `answer` (faults injected). */
function recording(answer: (n: number, call: 'one' | 'batch') => boolean = () => true, batchFails = false) {
  const calls: { kind: 'one' | 'batch'; ns: number[] }[] = [];
  const sends: SendCalls = {
    one: async (_info, p) => {
      calls.push({ kind: 'one', ns: [nOf(p)] });
      if (!answer(nOf(p), 'one')) throw new Error(`refused ${nOf(p)}`);
    },
    batch: async (_info, ps) => {
      calls.push({ kind: 'batch', ns: ps.map(nOf) });
      if (batchFails) throw new Error('the call failed');
      return ps.map((p): EntryAnswer => (answer(nOf(p), 'batch') ? { ok: true } : { ok: false, error: new Error('entry failed') }));
    },
  };
  return { calls, sends };
}

describe('sends to one standard queue made together go out in SendMessageBatch calls (GatheredSends)', () => {
  it('25 sends in one tick leave as batches of 10, 10 and 5, in the order made; a lone send goes by SendMessage', async () => {
    const { calls, sends } = recording();
    const gathered = new GatheredSends(sends);
    await Promise.all(Array.from({ length: 25 }, (_, n) => gathered.send(INFO, prepared(n))));
    await gathered.send(INFO, prepared(99));
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
    assert.deepEqual(calls, [
      { kind: 'batch', ns: range(0, 10) },
      { kind: 'batch', ns: range(10, 20) },
      { kind: 'batch', ns: range(20, 25) },
      { kind: 'one', ns: [99] },
    ]);
  });

  it(`no batch carries more than ${BATCH_BYTES} bytes`, async () => {
    const { calls, sends } = recording();
    const gathered = new GatheredSends(sends);
    await Promise.all([0, 1, 2, 3].map((n) => gathered.send(INFO, prepared(n, BATCH_BYTES / 3))));
    assert.deepEqual(calls, [{ kind: 'batch', ns: [0, 1, 2] }, { kind: 'one', ns: [3] }]);
  });

  it('an entry the batch failed is sent again by itself and settles with that answer; the others are not sent twice', async () => {
    const { calls, sends } = recording((n, call) => !(n === 1 && call === 'batch') && !(n === 2));
    const gathered = new GatheredSends(sends);
    const outcomes = await Promise.allSettled([0, 1, 2, 3].map((n) => gathered.send(INFO, prepared(n))));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(calls, [{ kind: 'batch', ns: [0, 1, 2, 3] }, { kind: 'one', ns: [1] }, { kind: 'one', ns: [2] }]);
  });

  it('a batch call that failed as a whole sends each of its messages again by itself', async () => {
    const { calls, sends } = recording(() => true, true);
    const gathered = new GatheredSends(sends);
    await Promise.all([0, 1].map((n) => gathered.send(INFO, prepared(n))));
    assert.deepEqual(calls, [{ kind: 'batch', ns: [0, 1] }, { kind: 'one', ns: [0] }, { kind: 'one', ns: [1] }]);
  });
});

describe('gathered sends on the lab SQS', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  /** A client of our own, counting the send calls by command. */
  function countingClient() {
    const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
    const counts: Record<string, number> = {};
    client.middlewareStack.add((next, context) => async (args) => {
      counts[context.commandName!] = (counts[context.commandName!] ?? 0) + 1;
      return next(args);
    }, { step: 'initialize' });
    return { client, counts };
  }

  it('ten publishes made together reach the queue in one SendMessageBatch call, each body byte for byte', async () => {
    const { name: queue, url } = await raw.fresh('gathered');
    const { client, counts } = countingClient();
    const { transport: t } = transport({ client });
    const app = createApp({ transport: t, queue });
    let ids: string[];
    try {
      ids = await Promise.all(Array.from({ length: 10 }, (_, i) => app.publish(URN, { i })));
    } finally {
      await app.close();
      client.destroy();
    }
    assert.equal(counts.SendMessageBatchCommand, 1);
    assert.equal(counts.SendMessageCommand, undefined);
    const received = await raw.drain(url, 10);
    assert.deepEqual(received.map((m) => (JSON.parse(m.Body!) as { meta: { id: string } }).meta.id).sort(), [...ids].sort());
  });

  it('one message SQS refuses in a batch (a rider it does not carry) fails alone, with SendMessage\'s own error; the rest are delivered once', async () => {
    const { name: queue, url } = await raw.fresh('gathered-refused');
    const { client, counts } = countingClient();
    const { transport: t } = transport({ client });
    const app = createApp({ transport: t, queue });
    let outcomes: PromiseSettledResult<string>[];
    try {
      outcomes = await Promise.allSettled([0, 1, 2].map((i) => app.publish(URN, { i }, i === 1 ? { headers: { traceparent: 'bad\u0001value' } } : {})));
    } finally {
      await app.close();
      client.destroy();
    }
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /InvalidMessageContents|invalid/i);
    assert.deepEqual(counts, { GetQueueUrlCommand: 1, GetQueueAttributesCommand: 1, SendMessageBatchCommand: 1, SendMessageCommand: 1 });
    const received = await raw.drain(url, 2);
    assert.deepEqual(received.map((m) => (JSON.parse(m.Body!) as { data: { i: number } }).data.i).sort(), [0, 2]);
    assert.equal((await raw.counts(url)).visible, 0);
  });

  it('a FIFO queue is not gathered: sends made together go by SendMessage, one call each', async () => {
    const { name: queue, url } = await raw.fresh('gathered', { fifo: true });
    const { client, counts } = countingClient();
    const { transport: t } = transport({ client });
    const app = createApp({ transport: t, queue });
    try {
      await Promise.all([0, 1, 2].map((i) => app.publish(URN, { i })));
    } finally {
      await app.close();
      client.destroy();
    }
    assert.equal(counts.SendMessageCommand, 3);
    assert.equal(counts.SendMessageBatchCommand, undefined);
    assert.equal((await raw.drain(url, 3)).length, 3);
  });
});
