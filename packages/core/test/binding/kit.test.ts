import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BabelQueueError, silentLogger, TransportClosedError as RootTransportClosedError } from '@babelqueue/core';
import {
  alreadySettled,
  BrokerUnavailableError,
  DrainLimits,
  Holds,
  maskUserInfo,
  PublishNotConfirmedError,
  redactCredentials,
  redactSecrets,
  SettleOnce,
  TransportClosedError,
  TransportLifecycle,
  ReconnectingConnection,
  LoopStop,
  HandOver,
  pullLoop,
  type AbandonableDelivery,
} from '@babelqueue/core/binding';
import { until } from '../../../../test/support/until.js';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('@babelqueue/core/binding: the mechanics every binding shares', () => {
  it('the error family: one base, broker carried, the same class from both entries', () => {
    const closed = new TransportClosedError('RabbitMQ');
    assert.equal(closed.message, 'the RabbitMQ transport is closed');
    assert.equal(closed.broker, 'RabbitMQ');
    assert.ok(closed instanceof BabelQueueError, 'a BabelQueueError');
    assert.equal(RootTransportClosedError, TransportClosedError, 'instanceof holds whichever entry a user imports');
    const cause = new Error('ECONNREFUSED');
    const down = new BrokerUnavailableError('Pulsar', 'cannot reach it', { cause });
    assert.equal(down.broker, 'Pulsar');
    assert.equal(down.cause, cause);
    const refused = new PublishNotConfirmedError('Artemis', 'orders', 'rejected');
    assert.equal(refused.message, 'publish to "orders" was not confirmed by Artemis: rejected');
    assert.equal(refused.queue, 'orders');
    assert.equal(new BabelQueueError('core refusal').broker, undefined);
  });

  it('SettleOnce settles once, and a settlement that threw may be settled again', async () => {
    const once = new SettleOnce();
    await assert.rejects(once.run({ kind: 'ack' }, () => Promise.reject(new Error('DLQ write failed'))), /DLQ write failed/);
    assert.equal(once.settled, false);
    await once.run({ kind: 'ack' }, () => Promise.resolve());
    assert.equal(once.settled, true);
    await assert.rejects(once.run({ kind: 'ack' }, () => Promise.resolve()), /already settled/);
    assert.equal(alreadySettled('orders').message, 'delivery of "orders" was already settled');
  });

  it('Holds releases after the delay, or all at once on flush', async () => {
    const released: string[] = [];
    const holds = new Holds(20);
    holds.add(() => released.push('late'));
    await until(() => released.length === 1, 20_000, 'the held delivery released');
    holds.add(() => released.push('flushed'));
    holds.flush();
    assert.deepEqual(released, ['late', 'flushed']);
  });

  it('redaction: the password (raw and decoded) or a lone token; user-info masked', () => {
    assert.equal(redactCredentials('login failed for s%40cret and s@cret', 'amqp://u:s%40cret@h'), 'login failed for *** and ***');
    assert.equal(redactCredentials('refused key k3y', 'sb://k3y@h'), 'refused key ***');
    assert.equal(redactCredentials('no url here', 'not a url'), 'no url here');
    assert.equal(redactSecrets('a b c', ['b', undefined, '']), 'a *** c');
    assert.equal(maskUserInfo('pulsar://user:pw@host:6650?x=1'), 'pulsar://***@host:6650?x=1');
  });

  it('DrainLimits counts toward maxMessages and stops after idleMs with nothing in flight', async () => {
    const drain = new DrainLimits({ maxMessages: 2 });
    assert.equal(drain.left(), 2);
    drain.taken += 2;
    assert.equal(drain.reached(), true);
    assert.equal(new DrainLimits({}).left(), Infinity);
    let busy = true;
    let stopped = false;
    const idle = new DrainLimits({ idleMs: 30 });
    idle.startIdleClock(() => stopped, () => busy, () => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(stopped, false, 'never idle while a delivery is in flight');
    busy = false;
    idle.touch();
    await until(() => stopped, 20_000, 'the idle stop');
    idle.disarm();
  });

  it('DrainLimits.startIdleClock: the idle budget counts from when consuming began, not from the loop\'s creation', async () => {
    const IDLE_MS = 50;
    let stopped = false;
    const drain = new DrainLimits({ idleMs: IDLE_MS });
    // Connecting took twice the idle budget.
    await sleep(2 * IDLE_MS);
    const began = Date.now();
    drain.startIdleClock(() => stopped, () => false, () => (stopped = true));
    assert.equal(stopped, false);
    await until(() => stopped, 20_000, 'the idle stop');
    assert.ok(Date.now() - began >= IDLE_MS, `stopped ${Date.now() - began} ms after consuming began, before the ${IDLE_MS} ms idle budget`);
    drain.disarm();
  });

  it('pullLoop: idleMs counts the time spent waiting for deliveries, not a first fetch\'s connect', async () => {
    const IDLE_MS = 200;
    const POLL_MS = 50;
    let calls = 0;
    let connectedAt = 0;
    const fetch = async (_max: number, waitMs: number) => {
      // The first fetch connects (as Service Bus opens its link) for three idle budgets, then waits as asked.
      if (calls++ === 0) {
        await sleep(3 * IDLE_MS);
        connectedAt = Date.now();
      }
      await sleep(waitMs);
      return [];
    };
    await pullLoop(fetch, async () => undefined, { concurrency: 1, signal: new AbortController().signal, idleMs: IDLE_MS }, POLL_MS);
    const waited = Date.now() - connectedAt;
    assert.ok(waited >= IDLE_MS, `the loop gave up ${waited} ms after connecting, before its ${IDLE_MS} ms idle budget (${calls} fetches)`);
  });

  it('TransportLifecycle: work refused once closing began, runs waited for, released once, terminal', async () => {
    const lifecycle = new TransportLifecycle('RabbitMQ');
    lifecycle.assertOpen();
    let finish!: () => void;
    const run = lifecycle.track(new Promise<string>((resolve) => (finish = () => resolve('done'))));
    const order: string[] = [];
    lifecycle.signal.addEventListener('abort', () => order.push('aborted'));
    let releases = 0;
    const closing = lifecycle.close(() => {
      releases += 1;
      order.push('released');
    });
    assert.equal(lifecycle.closed, true);
    assert.equal(lifecycle.signal.aborted, true, 'the loops are told at once');
    assert.throws(() => lifecycle.assertOpen(), (error: unknown) => error instanceof TransportClosedError && error.broker === 'RabbitMQ');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, ['aborted'], 'nothing is released while a run is still going');
    finish();
    assert.equal(await run, 'done');
    assert.equal(lifecycle.close(() => undefined), closing, 'a second close is the first');
    await closing;
    assert.deepEqual(order, ['aborted', 'released']);
    assert.equal(releases, 1);
    await assert.rejects(lifecycle.track(Promise.reject(new Error('boom'))), /boom/);
  });

  it('ReconnectingConnection: retries what retrying can cure, reconnects after a loss, gives up on a final refusal, closes for good', async () => {
    /** A broker on demand: each dial takes the next scripted answer. */
    class Scripted extends ReconnectingConnection<{ id: number }> {
      readonly answers: (Error | { id: number })[] = [];
      readonly ended: number[] = [];
      lose: ((connection: { id: number }, error?: Error) => void) | undefined;
      constructor() {
        super({ broker: 'Test', label: 'Test', url: 'test://user:s3cret@host', reconnect: { initialDelayMs: 1, maxDelayMs: 5, multiplier: 2 }, logger: silentLogger });
      }
      protected dial(lost: (connection: { id: number }, error?: Error) => void): Promise<{ id: number }> {
        this.lose = lost;
        const answer = this.answers.shift() ?? new Error('connection refused by s3cret');
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      }
      protected end(connection: { id: number }): Promise<void> {
        this.ended.push(connection.id);
        return Promise.resolve();
      }
      protected isFinal(cause: unknown): boolean {
        return cause instanceof Error && cause.message === 'ACCESS_REFUSED';
      }
    }
    const flaky = new Scripted();
    flaky.answers.push(new Error('ECONNREFUSED s3cret'), { id: 1 }, { id: 2 });
    const failures: string[] = [];
    flaky.onFailure((error) => failures.push(error.message));
    const first = await flaky.open(true);
    assert.deepEqual(first, { id: 1 }, 'a refused socket is tried again');
    assert.deepEqual(failures, ['Test at test://user:***@host is unavailable: ECONNREFUSED ***'], 'the secret never shows');
    flaky.lose!(first, new Error('reset'));
    assert.equal(flaky.current(), undefined);
    assert.deepEqual(await flaky.open(true), { id: 2 }, 'a lost connection comes back');
    const waiting = new Scripted();
    const waiter = waiting.open(true);
    await waiting.close();
    await assert.rejects(waiter, TransportClosedError);
    await assert.rejects(waiting.open(false), TransportClosedError);
    await flaky.close();
    assert.deepEqual(flaky.ended, [2]);
    assert.equal(flaky.terminal(), true);
    const refused = new Scripted();
    refused.answers.push(new Error('ACCESS_REFUSED'));
    await assert.rejects(refused.open(true), /Test at test:\/\/user:\*\*\*@host is unavailable: ACCESS_REFUSED/);
    assert.equal(refused.terminal(), true, 'a refused login before the first connection is final');
  });

  it('LoopStop: one stop, from a followed signal or a request, seen as flag, promise and signal', async () => {
    const caller = new AbortController();
    const stop = new LoopStop();
    const unfollow = stop.follow(caller.signal, new AbortController().signal);
    assert.equal(stop.stopping, false);
    caller.abort();
    assert.equal(stop.stopping, true);
    assert.equal(stop.signal.aborted, true);
    assert.equal(await stop.stopped, 'stop');
    stop.request();
    unfollow();
    const early = new LoopStop();
    early.follow(AbortSignal.abort());
    assert.equal(early.stopping, true, 'an aborted signal stops it at once');
  });

  it('HandOver: counts in flight, logs a throw and an unsettled delivery (never the body), stops at maxMessages once all settled', async () => {
    const lines: string[] = [];
    const logger = { ...silentLogger, error: (_fields: unknown, message: string) => lines.push(message) } as typeof silentLogger;
    const drain = new DrainLimits({ maxMessages: 2 });
    const stop = new LoopStop();
    let freed = 0;
    const finishers: (() => void)[] = [];
    const handOver = new HandOver<AbandonableDelivery>({
      queue: 'orders',
      logger,
      drain,
      stop,
      abandoned: 'requeueing it',
      freed: () => (freed += 1),
      onDelivery: (delivery) => new Promise<void>((resolve, reject) => finishers.push(() => (delivery.queue === 'throws' ? reject(new Error('boom')) : resolve()))),
    });
    const delivery = (queue: string, unsettled: boolean) => ({ queue, abandon: () => unsettled }) as unknown as AbandonableDelivery;
    drain.taken += 2;
    const first = handOver.hand(delivery('throws', false));
    const second = handOver.hand(delivery('orders', true));
    assert.equal(handOver.size, 2);
    finishers[0]!();
    await first;
    assert.equal(stop.stopping, false, 'one still in flight');
    finishers[1]!();
    await second;
    await handOver.settled();
    assert.equal(handOver.size, 0);
    assert.equal(freed, 2);
    assert.deepEqual(lines, ['delivery handler threw', 'delivery was not settled; requeueing it']);
    assert.equal(stop.stopping, true, 'maxMessages taken and all settled: the loop stops');
  });
});
