/**
 * The transport contract (packages/core/src/transport/transport.ts), one suite
 * run by every transport preset: memory, each binding, each layout or mode
 * (Watermill's `TestPubSub` is the model). A preset is one small test file that
 * calls {@link transportContract} with a factory; everything here is said once
 * for every broker, through the binding's own `Transport` and the App:
 *
 * - publish / consume, riders, the first delivery counted as attempt 1;
 * - each decision kind the policy hands a transport, executed on the broker:
 *   ack, retry (and retry with a delay), dead-letter, drop, poison by the
 *   binding's `BindingRules`, the unknown-URN strategies, release;
 * - drain limits (`maxMessages`, `idleMs`);
 * - scan / depth / purge (what the DLQ tools read);
 * - close: terminal, a second close a no-op, publish and consume after it
 *   rejected with the transport's `TransportClosedError`;
 * - the unsettled rule: a delivery the consumer returned from without settling
 *   is never lost: once its consume loop ended, the broker hands it out again.
 *
 * What only one broker has (its native properties, its failure injection, its
 * own dead-letter mechanism) stays in that binding's own tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createApp,
  EnvelopeCodec,
  UnrecoverableError,
  type App,
  type AppOptions,
  type Decision,
  type Logger,
  type Message,
  type ScannedRecord,
  type Transport,
} from '@babelqueue/core';
import { reconcileAttempts, recordProjection, type Delivery } from '@babelqueue/core/binding';
import { captureLogger } from './capture-logger.js';
import { until, within } from './until.js';

/** The lab a preset opens once for the suite. */
export interface ContractLab {
  /**
   * A new transport for `queue` (each call a new one, the suite closes it).
   * Several transports of one queue must share the broker-side consumer
   * identity where the broker has one (a Kafka group), so that what one
   * left unsettled the next is handed.
   */
  transport(queue: string, logger: Logger): Transport;
  /**
   * A fresh, unused queue name (created with its dead-letter queue where the
   * broker needs queues made first). `shortLease`: the unsettled cases ask for
   * a queue whose reservation lapses within seconds where that is the queue's
   * setting (a Service Bus LockDuration).
   */
  queue(label: string, options?: { readonly shortLease?: boolean }): Promise<string>;
  /** Removes what the lab made; called once after the suite. */
  close?(): Promise<void>;
}

/** One transport preset: a binding in one layout or mode. */
export interface ContractPreset {
  /** Shown in the suite's name, e.g. `redis (zset layout)`. */
  readonly name: string;
  /** From `test/support/brokers.ts`: a missing lab skips loudly, and fails under CI=true. */
  readonly skip: string | false;
  open(): ContractLab | Promise<ContractLab>;
  /**
   * The backoff and release delay the delay cases ask for (default 300 ms):
   * long enough for the broker's clock (SQS counts whole seconds).
   */
  readonly delayMs?: number;
  /**
   * The least gap between two deliveries of a retry asked to wait
   * {@link delayMs}: `delayMs` where the transport delays retries, the first
   * tier where Kafka's tiers decide, 0 where nothing can delay (default from
   * the transport's capabilities).
   */
  readonly minGapMs?: number;
  /** Why this transport has no `scan`; the scan cases then check only that. */
  readonly noScan?: string;
  /** Why this transport's scan keeps no order (an SQS standard queue): the scan cases then compare sets. */
  readonly unorderedScan?: string;
  /** How long a drained consume waits for a delivery before it gives up: only a failing run waits this long. Default 30 s. */
  readonly idleMs?: number;
}

const URN = 'urn:babel:contract:checked';
const NOBODY = 'urn:babel:contract:nobody-home';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** Registers the contract for one preset: one `describe`, its cases run side by side on their own queues. */
export function transportContract(preset: ContractPreset): void {
  describe(`transport contract: ${preset.name}`, { skip: preset.skip, concurrency: 4 }, () => {
    const idleMs = preset.idleMs ?? 30_000;
    let lab: ContractLab;
    const transports: Transport[] = [];
    const apps: App[] = [];

    before(async () => {
      lab = await preset.open();
    });
    after(async () => {
      await Promise.allSettled(apps.map((a) => a.close()));
      await Promise.allSettled(transports.map((t) => t.close()));
      await lab?.close?.();
    });

    function transport(queue: string, logger: Logger = captureLogger()): Transport {
      const t = lab.transport(queue, logger);
      transports.push(t);
      return t;
    }

    /** An App on a transport of its own, recording every decision the transport executed. */
    function app(queue: string, options: Partial<AppOptions> = {}) {
      const logger = captureLogger();
      const t = transport(queue, logger);
      const decisions: Decision['kind'][] = [];
      const a = createApp({
        transport: t,
        queue,
        logger,
        instrumentation: { delivery: () => ({ settled: (end) => void decisions.push(end.decision) }) },
        ...options,
      });
      apps.push(a);
      return { app: a, transport: t, logger, decisions, dlq: a.deadLetterQueueName() };
    }

    /** Takes (and acknowledges) `count` records of `queue` through a transport of its own. */
    async function take(queue: string, count: number): Promise<Delivery[]> {
      const t = transport(queue);
      const got: Delivery[] = [];
      await t.consume(queue, async (delivery) => {
        got.push(delivery);
        await delivery.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: count, idleMs });
      return got;
    }

    async function depth(queue: string): Promise<number> {
      const t = transport(queue);
      assert.ok(t.depth, `${preset.name} implements depth`);
      return t.depth(queue);
    }

    /** Waits until `queue` holds `count` records (acks and writes reach some brokers' counts a moment later). */
    async function waitDepth(queue: string, count: number): Promise<void> {
      const t = transport(queue);
      let last = -1;
      await until(async () => (last = await t.depth!(queue)) === count, 30_000, `${queue} to hold ${count}`, 100)
        .catch((error: Error) => assert.fail(`${error.message} (it holds ${last})`));
    }

    const json = (delivery: Delivery) => JSON.parse(delivery.body.toString('utf8'));

    /** The first transport's capabilities, read without connecting. */
    function capabilities(queue: string) {
      return transport(queue).capabilities;
    }

    describe('publish and consume', () => {
      it('a published message is handled once as attempt 1, riders arrive as headers, and it is gone', async () => {
        const queue = await lab.queue('ack');
        const { app: a, decisions, transport: t } = app(queue);
        const seen: Message[] = [];
        a.handle(URN, (_data, message) => void seen.push(message));
        const id = await a.publish(URN, { n: 1 }, { headers: { traceparent: TRACEPARENT } });
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(seen.map((m) => [m.id, m.attempts, m.envelope.data]), [[id, 1, { n: 1 }]]);
        if (t.capabilities.headers) assert.equal(seen[0]!.headers.traceparent, TRACEPARENT, 'riders come back as headers');
        assert.deepEqual(decisions, ['ack']);
        await waitDepth(queue, 0);
      });

      it('publishMany: every message handled once (a standard SQS queue keeps no order)', async () => {
        const queue = await lab.queue('many');
        const { app: a } = app(queue);
        const seen: number[] = [];
        a.handle(URN, (data: { n: number }) => void seen.push(data.n));
        await a.publishMany(URN, [{ n: 1 }, { n: 2 }, { n: 3 }]);
        assert.equal(await a.consume({ maxMessages: 3, idleMs }), 3);
        assert.deepEqual([...seen].sort(), [1, 2, 3]);
      });
    });

    describe('decisions', () => {
      it('retry: a failing handler is delivered again with the counted attempt until it succeeds (no retry path: left unsettled and delivered again, uncounted)', async () => {
        const queue = await lab.queue('retry');
        const { app: a, decisions, transport: t } = app(queue, { maxAttempts: 3 });
        const attempts: number[] = [];
        a.handle(URN, (_data, message) => {
          attempts.push(message.attempts);
          if (attempts.length < 3) throw new Error('not yet');
        });
        await a.publish(URN, { n: 1 });
        assert.equal(await a.consume({ maxMessages: 3, idleMs }), 3);
        if (t.capabilities.retry) {
          assert.deepEqual(attempts, [1, 2, 3]);
          assert.deepEqual(decisions, ['retry', 'retry', 'ack']);
        } else {
          assert.deepEqual(attempts, [1, 1, 1], 'nothing counts a delivery the transport cannot retry');
          assert.deepEqual(decisions, ['unsettled', 'unsettled', 'ack']);
        }
        await waitDepth(queue, 0);
      });

      it('retry with a delay: the next delivery waits the backoff (where the transport can delay)', async () => {
        const queue = await lab.queue('backoff');
        const delayMs = preset.delayMs ?? 300;
        const { app: a, transport: t } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs: delayMs, multiplier: 1 } });
        const minGap = preset.minGapMs ?? (t.capabilities.delayedRetry ? delayMs : 0);
        const at: number[] = [];
        a.handle(URN, () => {
          at.push(Date.now());
          if (at.length < 2) throw new Error('later');
        });
        await a.publish(URN, {});
        assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
        // No upper bound: how much later depends on the machine's load.
        const gap = at[1]! - at[0]!;
        assert.ok(gap >= minGap - 20, `delivered again after ${gap} ms, at least ${minGap} expected`);
      });

      it('exhausted: the record goes to the DLQ with the counted attempt, the delivery is settled', { skip: false }, async () => {
        const queue = await lab.queue('exhaust');
        const { app: a, decisions, dlq, transport: t } = app(queue, { maxAttempts: 2, deadLetter: true });
        const attempts: number[] = [];
        a.handle(URN, (_data, message) => {
          attempts.push(message.attempts);
          throw new TypeError('gateway timeout');
        });
        const id = await a.publish(URN, { n: 3 });
        if (!t.capabilities.retry) {
          // Without a retry path nothing is counted: the cap is never reached (Kafka without tiers).
          assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
          assert.deepEqual(decisions, ['unsettled', 'unsettled']);
          return;
        }
        assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
        assert.deepEqual(attempts, [1, 2]);
        assert.deepEqual(decisions, ['retry', 'dead-letter']);
        const [record] = await take(dlq!, 1);
        const parsed = json(record!);
        assert.equal(parsed.meta.id, id);
        assert.deepEqual(parsed.data, { n: 3 });
        assert.equal(parsed.attempts, 2, 'the body carries the counted attempt');
        assert.deepEqual(
          [parsed.dead_letter.reason, parsed.dead_letter.attempts, parsed.dead_letter.error, parsed.dead_letter.exception, parsed.dead_letter.original_queue],
          ['failed', 2, 'gateway timeout', 'TypeError', queue],
        );
        await waitDepth(queue, 0);
      });

      it('exhausted with dead-lettering off: dropped and logged, nothing left', async () => {
        const queue = await lab.queue('drop');
        const { app: a, decisions, logger, transport: t } = app(queue, { maxAttempts: 1 });
        a.handle(URN, () => {
          throw new Error('no');
        });
        await a.publish(URN, {});
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(decisions, ['drop']);
        assert.match(logger.text(), /dropped/);
        await waitDepth(queue, 0);
        assert.equal(await depth(defaultDlq(t, queue)), 0);
      });

      it('UnrecoverableError: dead-lettered on attempt 1, never retried', async () => {
        const queue = await lab.queue('unrecoverable');
        const { app: a, decisions, dlq } = app(queue, { maxAttempts: 5, deadLetter: true });
        a.handle(URN, () => {
          throw new UnrecoverableError('card declined');
        });
        await a.publish(URN, {});
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(decisions, ['dead-letter']);
        const [record] = await take(dlq!, 1);
        const block = json(record!).dead_letter;
        assert.deepEqual([block.reason, block.attempts, block.exception], ['failed', 1, 'UnrecoverableError']);
        await waitDepth(queue, 0);
      });
    });

    describe('unknown URN strategies', () => {
      it('fail: delivered again like a failure, then dead-lettered as unknown_urn with the counted attempt', async () => {
        const queue = await lab.queue('urn-fail');
        const { app: a, decisions, dlq, transport: t } = app(queue, { maxAttempts: 2, deadLetter: true, onUnknownUrn: 'fail' });
        a.handle(URN, () => undefined);
        await a.publish(NOBODY, {});
        assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
        if (!t.capabilities.retry) {
          assert.deepEqual(decisions, ['unsettled', 'unsettled']);
          return;
        }
        assert.deepEqual(decisions, ['retry', 'dead-letter']);
        const [record] = await take(dlq!, 1);
        assert.deepEqual([json(record!).dead_letter.reason, json(record!).dead_letter.attempts], ['unknown_urn', 2]);
        await waitDepth(queue, 0);
      });

      it('release: delivered again after the release delay, bounded by maxAttempts', async () => {
        const queue = await lab.queue('urn-release');
        const delayMs = preset.delayMs ?? 300;
        const { app: a, decisions, dlq, transport: t } = app(queue, { maxAttempts: 2, deadLetter: true, onUnknownUrn: 'release', unknownUrnReleaseDelayMs: delayMs });
        a.handle(URN, () => undefined);
        const canDelay = t.capabilities.delayedRetry || t.capabilities.delayedPublish;
        const minGap = preset.minGapMs ?? (canDelay ? delayMs : 0);
        await a.publish(NOBODY, {});
        const started = Date.now();
        assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
        if (!t.capabilities.retry) {
          assert.deepEqual(decisions, ['unsettled', 'unsettled']);
          return;
        }
        assert.ok(Date.now() - started >= minGap - 20, 'the second delivery waited the release delay');
        assert.deepEqual(decisions, ['retry', 'dead-letter']);
        const [record] = await take(dlq!, 1);
        assert.equal(json(record!).dead_letter.reason, 'unknown_urn');
      });

      it('delete: acknowledged and dropped, even with a DLQ', async () => {
        const queue = await lab.queue('urn-delete');
        const { app: a, decisions, dlq } = app(queue, { deadLetter: true, onUnknownUrn: 'delete' });
        a.handle(URN, () => undefined);
        await a.publish(NOBODY, {});
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(decisions, ['drop']);
        await waitDepth(queue, 0);
        assert.equal(await depth(dlq!), 0);
      });

      it('dead_letter: written to the DLQ on the first delivery; without a DLQ it degrades to delete', async () => {
        const queue = await lab.queue('urn-dl');
        const on = app(queue, { maxAttempts: 5, deadLetter: true, onUnknownUrn: 'dead_letter' });
        on.app.handle(URN, () => undefined);
        await on.app.publish(NOBODY, {});
        assert.equal(await on.app.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(on.decisions, ['dead-letter']);
        const [record] = await take(on.dlq!, 1);
        assert.deepEqual([json(record!).dead_letter.reason, json(record!).dead_letter.attempts], ['unknown_urn', 1]);

        const off = app(queue, { onUnknownUrn: 'dead_letter' });
        off.app.handle(URN, () => undefined);
        await off.app.publish(NOBODY, {});
        assert.equal(await off.app.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(off.decisions, ['drop']);
        await waitDepth(queue, 0);
        assert.equal(await depth(on.dlq!), 0);
      });
    });

    describe('poison', () => {
      const POISON = Buffer.from('not json {');

      it('with a DLQ: the poison record on the first delivery, the handler never runs', async () => {
        const queue = await lab.queue('poison-dl');
        const { app: a, decisions, dlq, transport: t } = app(queue, { maxAttempts: 5, deadLetter: true });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        await t.publishRaw!(queue, POISON);
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.equal(calls, 0);
        assert.deepEqual(decisions, ['dead-letter']);
        const [record] = await take(dlq!, 1);
        const parsed = json(record!);
        assert.deepEqual([parsed.raw, parsed.dead_letter.reason, parsed.dead_letter.attempts], ['not json {', 'poison', 1]);
        await waitDepth(queue, 0);
      });

      it('without a DLQ: as the binding\'s rules say (poisonWithoutDeadLetter), the body never logged', async () => {
        const queue = await lab.queue('poison-off');
        const { app: a, decisions, logger, transport: t } = app(queue, { maxAttempts: 2 });
        a.handle(URN, () => undefined);
        await t.publishRaw!(queue, POISON);
        const rule = t.rules.poisonWithoutDeadLetter;
        const expected: Decision['kind'][] = {
          drop: ['drop'],
          'dead-letter-default': ['dead-letter'],
          native: ['native-dead-letter'],
          'bounded-retry': t.capabilities.retry ? ['retry', 'drop'] : ['drop'],
        }[rule] as Decision['kind'][];
        assert.equal(await a.consume({ maxMessages: expected.length, idleMs }), expected.length);
        assert.deepEqual(decisions, expected, `poisonWithoutDeadLetter: ${rule}`);
        assert.doesNotMatch(logger.text(), /not json \{/, 'the body is never logged');
        if (rule === 'dead-letter-default') {
          const [record] = await take(defaultDlq(t, queue), 1);
          assert.equal(json(record!).dead_letter.reason, 'poison');
        }
        if (rule !== 'native') await waitDepth(queue, 0);
      });

      it('on_unknown_urn delete: dropped, or dead-lettered where delete never covers poison (deleteStrategyDropsPoison)', async () => {
        const queue = await lab.queue('poison-delete');
        const { app: a, decisions, dlq, transport: t } = app(queue, { deadLetter: true, onUnknownUrn: 'delete' });
        a.handle(URN, () => undefined);
        await t.publishRaw!(queue, POISON);
        assert.equal(await a.consume({ maxMessages: 1, idleMs }), 1);
        assert.deepEqual(decisions, [t.rules.deleteStrategyDropsPoison ? 'drop' : 'dead-letter']);
        await waitDepth(queue, 0);
        assert.equal(await depth(dlq!), t.rules.deleteStrategyDropsPoison ? 0 : 1);
      });
    });

    describe('drain limits', () => {
      it('maxMessages stops after that many deliveries and leaves the rest; idleMs ends a drain of an empty queue', async () => {
        const queue = await lab.queue('drain');
        const { app: a } = app(queue);
        const seen: number[] = [];
        a.handle(URN, (data: { n: number }) => void seen.push(data.n));
        for (let n = 1; n <= 3; n++) await a.publish(URN, { n });
        assert.equal(await a.consume({ maxMessages: 2, idleMs }), 2);
        assert.equal(seen.length, 2);
        await waitDepth(queue, 1);
        assert.equal(await a.consume({ maxMessages: 5, idleMs: 1500 }), 1, 'the idle bound ends the drain once the queue is empty');
        assert.deepEqual([...seen].sort(), [1, 2, 3], "each once (a standard SQS queue keeps no order)");
      });
    });

    describe('scan, depth and purge', () => {
      async function all(records: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
        const out: ScannedRecord[] = [];
        for await (const record of records) out.push(record);
        return out;
      }

      it('scan reads every record from the head, oldest first, with its headers, from any offset; depth counts them', async () => {
        const queue = await lab.queue('scan');
        const t = transport(queue);
        if (!t.scan) {
          assert.ok(preset.noScan, `${preset.name} has no scan and says why (noScan)`);
          assert.ok(t.browse, 'a transport without scan browses');
          return;
        }
        const sent = bodies(queue, 3);
        for (const body of sent) await t.publishRaw!(queue, body, { traceparent: TRACEPARENT });
        const read = await within(all(t.scan(queue)), 30_000, `a scan of ${queue}`);
        const order = (texts: string[]) => (preset.unorderedScan === undefined ? texts : [...texts].sort());
        assert.deepEqual(order(read.map((r) => r.body.toString())), order(sent.map((b) => b.toString())), 'every body, byte for byte, in order');
        assert.deepEqual(read.map((r) => r.index), [0, 1, 2]);
        if (t.capabilities.headers) for (const record of read) assert.equal(record.headers.traceparent, TRACEPARENT, 'riders come back as headers');
        const tail = await all(t.scan(queue, { offset: 1 }));
        if (preset.unorderedScan === undefined) {
          assert.deepEqual(tail.map((r) => [r.index, r.body.toString()]), read.slice(1).map((r) => [r.index, r.body.toString()]), 'offset skips from the head');
        } else {
          assert.deepEqual(tail.map((r) => r.index), [1, 2], 'offset skips that many records');
        }
        assert.deepEqual(await all(t.scan(queue, { offset: 3 })), [], 'past the end: nothing');
        assert.equal(await t.depth!(queue), 3);
      });

      it('reading changes nothing: after a scan ended early, an aborted one and a full one, depth stays and a consumer gets every record as a first delivery', async () => {
        const queue = await lab.queue('scan-still');
        const t = transport(queue);
        if (!t.scan) {
          assert.ok(preset.noScan, 'says why it has no scan');
          return;
        }
        const sent = bodies(queue, 2);
        for (const body of sent) await t.publishRaw!(queue, body);
        for await (const record of t.scan(queue)) {
          assert.equal(record.index, 0);
          break;
        }
        const controller = new AbortController();
        const aborted: ScannedRecord[] = [];
        for await (const record of t.scan(queue, { signal: controller.signal })) {
          aborted.push(record);
          controller.abort();
        }
        assert.equal(aborted.length, 1, 'an aborted scan ends');
        assert.equal((await all(t.scan(queue))).length, 2);
        assert.equal(await t.depth!(queue), 2, 'nothing was taken');
        const got = await take(queue, 2);
        const order = (texts: string[]) => (preset.unorderedScan === undefined ? texts : [...texts].sort());
        assert.deepEqual(order(got.map((d) => d.body.toString())), order(sent.map((b) => b.toString())), 'both still there, in order');
        // A leased scan receives each record (SQS counts it in ApproximateReceiveCount): only a peek leaves the count alone.
        if ((t.capabilities.scan ?? 'peek') === 'peek') {
          for (const delivery of got) assert.equal(reconcileAttempts(t.rules.attempts, 0, delivery.nativeAttempts), 0, 'no delivery was counted by the scans');
        }
      });

      it('a queue nobody wrote to scans as empty, depth 0', async () => {
        const queue = await lab.queue('scan-empty');
        const t = transport(queue);
        if (t.scan) assert.deepEqual(await all(t.scan(queue)), []);
        assert.equal(await t.depth!(queue), 0);
      });

      it('purge removes every waiting record and says how many; depth is then 0', async () => {
        const queue = await lab.queue('purge');
        const t = transport(queue);
        assert.ok(t.purge, `${preset.name} implements purge`);
        for (const body of bodies(queue, 3)) await t.publishRaw!(queue, body);
        await waitDepth(queue, 3);
        assert.equal(await t.purge(queue), 3);
        await waitDepth(queue, 0);
      });
    });

    describe('close', () => {
      it('is terminal: a second close is a no-op; publish, publishRaw and consume after it reject with TransportClosedError', async () => {
        const queue = await lab.queue('close');
        const t = transport(queue);
        await t.connect({ timeoutMs: 60_000, queue });
        await t.close();
        await t.close();
        const body = bodies(queue, 1)[0]!;
        const closed = (error: unknown) => {
          assert.equal((error as Error).name, 'TransportClosedError', `the closed error, not ${String(error)}`);
          return true;
        };
        await assert.rejects(t.publish({ body, queue, projection: recordProjection(body) }), closed);
        await assert.rejects(t.publishRaw!(queue, body), closed);
        await assert.rejects(
          within(t.consume(queue, async (d) => d.settle({ kind: 'ack' }), { concurrency: 1, signal: new AbortController().signal, maxMessages: 1, idleMs: 2000 }), 30_000, 'a consume after close'),
          closed,
        );
        await t.close();
      });

      it('close during consume: the consume resolves and nothing is lost (what it did not take is still there)', async () => {
        const queue = await lab.queue('close-consume');
        const { app: a, transport: t } = app(queue);
        let entered!: () => void;
        const inHandler = new Promise<void>((resolve) => (entered = resolve));
        const handled: number[] = [];
        a.handle(URN, (data: { n: number }) => {
          handled.push(data.n);
          entered();
        });
        await a.publish(URN, { n: 1 });
        const consuming = a.consume({ idleMs: 60_000 });
        await within(inHandler, 30_000, 'the first delivery');
        await t.close();
        await within(consuming, 30_000, 'the consume to resolve after close');
        await a.publish(URN, { n: 2 }).then(() => assert.fail('publish after close'), (error: Error) => assert.equal(error.name, 'TransportClosedError'));
        assert.deepEqual(handled, [1]);
      });
    });

    describe('the unsettled rule', () => {
      it('a delivery the consumer returned from without settling is handed out again once its consume loop ended (the transport still open)', async () => {
        const queue = await lab.queue('unsettled', { shortLease: true });
        const first = transport(queue);
        const body = bodies(queue, 1)[0]!;
        await first.publishRaw!(queue, body);
        const left: Delivery[] = [];
        await first.consume(queue, async (delivery) => void left.push(delivery), {
          concurrency: 1, signal: new AbortController().signal, maxMessages: 1, idleMs,
        });
        assert.equal(left.length, 1, 'handed over once and never settled');
        // `first` stays open: the end of its loop alone must let the record go.
        const [again] = await take(queue, 1);
        assert.ok(again, 'handed out again');
        assert.equal(idOf(again.body), idOf(body), 'the same message (the Redis zset layout re-encodes it as it reserves: the spec\'s one exception)');
        await first.close();
      });

      it('unsettled (a failed dead-letter write): nothing is acknowledged, the record is handed out again', async () => {
        const queue = await lab.queue('unsettled-decision', { shortLease: true });
        const first = transport(queue);
        const body = bodies(queue, 1)[0]!;
        await first.publishRaw!(queue, body);
        let settled = false;
        await first.consume(queue, async (delivery) => {
          await delivery.settle({ kind: 'unsettled', why: 'contract: left for redelivery' });
          settled = true;
        }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 1, idleMs });
        assert.ok(settled, 'settle resolved');
        await first.close();
        const [again] = await take(queue, 1);
        assert.equal(idOf(again!.body), idOf(body));
      });
    });

    // Kept last in the file: reads the capabilities the cases above branch on, so a preset that
    // changes them shows up here by name.
    it('declares its rules and capabilities', async () => {
      const queue = await lab.queue('rules');
      const caps = capabilities(queue);
      const t = transport(queue);
      assert.equal(typeof t.rules.name, 'string');
      assert.deepEqual(Object.keys(caps).filter((key) => key !== 'scan').sort(), ['delayedPublish', 'delayedRetry', 'headers', 'retry']);
      if (caps.scan !== undefined) assert.ok(caps.scan === 'peek' || caps.scan === 'leased', `scan is peek or leased, not ${String(caps.scan)}`);
    });
  });
}

function bodies(queue: string, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { n: i }, { queue })), 'utf8'));
}

/** The binding's default DLQ name for `queue`. */
function defaultDlq(t: Transport, queue: string): string {
  return t.rules.dlqName?.(queue, undefined) ?? `${queue}.dlq`;
}

function idOf(body: Buffer): string {
  return (JSON.parse(body.toString('utf8')) as { meta: { id: string } }).meta.id;
}
