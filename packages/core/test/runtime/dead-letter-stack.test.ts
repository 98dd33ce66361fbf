import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createApp, InMemoryTransport, reemit, silentLogger } from '../../src/index.js';

const URN = 'urn:babel:orders:charge';

async function deadLettered(deadLetter: Parameters<typeof createApp>[0]['deadLetter'], thrown: unknown): Promise<Record<string, any>> {
  const transport = new InMemoryTransport();
  const app = createApp({ transport, queue: 'orders', maxAttempts: 1, deadLetter, logger: silentLogger });
  app.handle(URN, () => {
    throw thrown;
  });
  await app.publish(URN, { order_id: 1 });
  // maxMessages ends it; the idle window only bounds a run that never gets its message (never raced: a busy machine stalls longer than any short window).
  assert.equal(await app.consume({ maxMessages: 1, idleMs: 30_000 }), 1);
  const [record] = transport.messages('orders.dlq');
  return JSON.parse(record!.toString('utf8')) as Record<string, any>;
}

describe('deadLetter.stack', () => {
  test('writes the thrown Error\'s stack as the last member of dead_letter', async () => {
    const error = new TypeError('card declined');
    const record = await deadLettered({ stack: true }, error);
    assert.deepEqual(Object.keys(record.dead_letter), ['reason', 'error', 'exception', 'failed_at', 'original_queue', 'attempts', 'lang', 'stack']);
    assert.equal(record.dead_letter.stack, error.stack);
  });

  test('is off by default, and writes nothing for a thrown non-Error', async () => {
    assert.equal((await deadLettered(true, new Error('x'))).dead_letter.stack, undefined);
    assert.equal((await deadLettered({ stack: true }, 'a string')).dead_letter.stack, undefined);
  });

  test('takes a boolean only', () => {
    assert.throws(() => createApp({ transport: new InMemoryTransport(), deadLetter: { stack: 'yes' as never } }), /deadLetter.stack must be true or false/);
  });
});

describe('reemit data', () => {
  test('replaces data in place, compact, every other byte as it was', () => {
    const raw = '{"job":"urn:babel:a:b", "trace_id":"t","data":{"n":12345678901234567890},"meta":{"id":"i"},"attempts":3,"x":1.0}';
    assert.equal(reemit(raw, { data: { n: 1, s: 'é/<' } }), '{"job":"urn:babel:a:b", "trace_id":"t","data":{"n":1,"s":"é/<"},"meta":{"id":"i"},"attempts":3,"x":1.0}');
    assert.equal(reemit(Buffer.from(raw), { data: { s: 'é' }, attempts: 0 }).toString('utf8'), '{"job":"urn:babel:a:b", "trace_id":"t","data":{"s":"é"},"meta":{"id":"i"},"attempts":0,"x":1.0}');
    assert.throws(() => reemit(raw, { data: [] as never }), /data must be a JSON object/);
  });
});
