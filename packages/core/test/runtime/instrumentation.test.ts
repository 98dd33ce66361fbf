import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConfigurationError,
  createApp,
  InMemoryTransport,
  type DeliveryEnd,
  type Instrumentation,
  type PublishResult,
  type PublishStart,
} from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';

/** An instrumentation that records every hook call, in order. */
function recorder(riders: { traceId?: string; headers?: Record<string, string> } = {}) {
  const calls: string[] = [];
  const publishes: { start: PublishStart; result?: PublishResult }[] = [];
  const ends: DeliveryEnd[] = [];
  const instrumentation: Instrumentation = {
    publish(start) {
      const entry: { start: PublishStart; result?: PublishResult } = { start };
      publishes.push(entry);
      return { ...riders, end: (result) => void (entry.result = result) };
    },
    delivery(start) {
      calls.push(`start ${start.queue} ${start.bytes > 0}`);
      return {
        async handle(message, invoke) {
          calls.push(`before ${message.urn} attempt ${message.attempts}`);
          const result = await invoke();
          calls.push('after');
          return result;
        },
        settled(end) {
          calls.push(`settled ${end.outcome} -> ${end.decision}${end.reason ? ` (${end.reason})` : ''}`);
          ends.push(end);
        },
      };
    },
  };
  return { instrumentation, calls, publishes, ends };
}

function setup(instrumentation: Instrumentation, options: Partial<Parameters<typeof createApp>[0]> = {}) {
  const transport = (options.transport as InMemoryTransport | undefined) ?? new InMemoryTransport();
  const logger = captureLogger();
  const app = createApp({ queue: 'orders', logger, ...options, transport, instrumentation });
  return { app, transport, logger };
}

describe('instrumentation seam', () => {
  test('publish: riders reach the native headers (the caller wins a clash), the trace id is stamped, end sees the envelope', async () => {
    const rec = recorder({ traceId: 'from-instrumentation', headers: { traceparent: 'tp-instr', tracestate: 'ts-instr' } });
    const { app, transport } = setup(rec.instrumentation);
    const id = await app.publish(URN, { n: 1 }, { headers: { tracestate: 'mine' } });
    const [stored] = transport.broker.ready('orders');
    assert.equal(stored!.headers.traceparent, 'tp-instr');
    assert.equal(stored!.headers.tracestate, 'mine');
    assert.equal(JSON.parse(stored!.body.toString()).trace_id, 'from-instrumentation');
    assert.deepEqual(rec.publishes[0]!.start, { urn: URN, queue: 'orders', headers: { tracestate: 'mine' } });
    assert.equal(rec.publishes[0]!.result!.envelope!.meta.id, id);
    assert.equal(rec.publishes[0]!.result!.error, undefined);
  });

  test("publish: the caller's traceId wins over the instrumentation's", async () => {
    const rec = recorder({ traceId: 'from-instrumentation' });
    const { app, transport } = setup(rec.instrumentation);
    await app.publish(URN, { n: 1 }, { traceId: 'caller' });
    assert.equal(JSON.parse(transport.broker.ready('orders')[0]!.body.toString()).trace_id, 'caller');
    assert.equal(rec.publishes[0]!.start.traceId, 'caller');
  });

  test('publish: a refused write ends the scope with the error, and the caller still gets it', async () => {
    const rec = recorder();
    const transport = new InMemoryTransport({ beforeWrite: () => { throw new Error('broker down'); } });
    const { app } = setup(rec.instrumentation, { transport });
    await assert.rejects(app.publish(URN, { n: 1 }), /broker down/);
    assert.match(String((rec.publishes[0]!.result!.error as Error).message), /broker down/);
    assert.equal(rec.publishes[0]!.result!.envelope!.job, URN);
  });

  test('delivery: handled -> ack, with the handler run inside the scope', async () => {
    const rec = recorder();
    const { app } = setup(rec.instrumentation);
    app.handle(URN, () => void rec.calls.push('handler'));
    await app.publish(URN, { n: 1 });
    await app.consume({ idleMs: 30 });
    assert.deepEqual(rec.calls, ['start orders true', `before ${URN} attempt 1`, 'handler', 'after', 'settled handled -> ack']);
    assert.equal(rec.ends[0]!.message!.urn, URN);
    assert.equal(rec.ends[0]!.attempts, 1);
  });

  test('delivery: the real decisions — retry, then dead-letter with its reason and the handler error', async () => {
    const rec = recorder();
    const { app } = setup(rec.instrumentation, { maxAttempts: 2, deadLetter: true });
    app.handle(URN, () => {
      throw new Error('nope');
    });
    await app.publish(URN, { n: 1 });
    await app.consume({ idleMs: 50 });
    const settled = rec.calls.filter((c) => c.startsWith('settled'));
    assert.deepEqual(settled, ['settled failed -> retry', 'settled failed -> dead-letter (failed)']);
    assert.equal((rec.ends[1]!.error as Error).message, 'nope');
    assert.equal(rec.ends[1]!.attempts, 2);
  });

  test('delivery: poison and unknown URN dropped under on_unknown_urn delete, with their reasons', async () => {
    const rec = recorder();
    const { app, transport } = setup(rec.instrumentation, { onUnknownUrn: 'delete', deadLetter: true });
    await transport.publishRaw('orders', Buffer.from('not json'));
    await app.publish('urn:babel:nobody:home', { n: 1 });
    await app.consume({ idleMs: 30 });
    assert.deepEqual(rec.calls.filter((c) => c.startsWith('settled')), [
      'settled poison -> drop (poison)',
      'settled unknown-urn -> drop (unknown_urn)',
    ]);
    assert.equal(rec.ends[0]!.message, undefined, 'a poison body has no message');
    assert.equal(rec.ends[1]!.message!.urn, 'urn:babel:nobody:home');
  });

  test('delivery: a dead-letter write that fails ends as unsettled, flagged; the next one is a dead-letter', async () => {
    const rec = recorder();
    let refuse = true;
    const transport = new InMemoryTransport({
      redeliveryDelayMs: 0,
      beforeWrite: (queue) => {
        if (refuse && queue === 'orders.dlq') throw new Error('dlq down');
      },
    });
    const { app } = setup(rec.instrumentation, { transport, deadLetter: true });
    await transport.publishRaw('orders', Buffer.from('not json'));
    await app.consume({ maxMessages: 1, idleMs: 30 });
    assert.equal(rec.ends[0]!.decision, 'unsettled');
    assert.equal(rec.ends[0]!.deadLetterWriteFailed, true);
    assert.equal(rec.ends[0]!.reason, 'poison');
    refuse = false;
    await app.consume({ maxMessages: 1, idleMs: 500 });
    assert.equal(rec.ends[1]!.decision, 'dead-letter');
    assert.equal(rec.ends[1]!.deadLetterWriteFailed, undefined);
  });

  test('a hook that throws is logged and ignored; the message is still handled and acknowledged', async () => {
    const instrumentation: Instrumentation = {
      publish: () => {
        throw new Error('publish hook bug');
      },
      delivery: () => ({
        settled: () => {
          throw new Error('settled hook bug');
        },
      }),
    };
    const { app, transport, logger } = setup(instrumentation);
    let ran = 0;
    app.handle(URN, () => void ran++);
    await app.publish(URN, { n: 1 });
    await app.consume({ idleMs: 30 });
    assert.equal(ran, 1);
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
    const messages = logger.lines.map((l) => l.message);
    assert.ok(messages.includes('instrumentation threw at the start of a publish; ignored'), 'the publish hook error is logged');
    assert.ok(messages.includes('instrumentation threw after a settlement; ignored'), 'the settled hook error is logged');
  });

  test('a malformed instrumentation fails at createApp', () => {
    const transport = new InMemoryTransport();
    assert.throws(() => createApp({ transport, instrumentation: { delivery: 'yes' } as never }), ConfigurationError);
    assert.throws(() => createApp({ transport, instrumentation: 42 as never }), ConfigurationError);
  });
});
