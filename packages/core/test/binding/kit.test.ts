import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BabelQueueError, TransportClosedError as RootTransportClosedError } from '@babelqueue/core';
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
} from '@babelqueue/core/binding';
import { until } from '../../../../test/support/until.js';

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
    idle.armIdle(() => stopped, () => busy, () => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(stopped, false, 'never idle while a delivery is in flight');
    busy = false;
    idle.touch();
    await until(() => stopped, 20_000, 'the idle stop');
    idle.disarm();
  });
});
