import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { PublishNotConfirmedError, RabbitMqTransport, RabbitMqUnavailableError } from '@babelqueue/rabbitmq';
import { publishFixture } from './support/publish-fixture.js';
import { envelope, rabbit } from './support/rabbit.js';

describe('RabbitMQ publish', { skip: rabbit.skip }, () => {
  const fixture = publishFixture();
  const { url, queue } = fixture;

  it('puts the envelope bytes and the native projection on the wire (read back with plain amqplib)', async () => {
    const q = queue('bq-rmq-wire');
    const { body, projection } = envelope('urn:babel:orders:created', { order_id: 1042, note: 'é ✓' }, q);
    await fixture.transport.publish({ body, queue: q, projection, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    const [message, ...rest] = await fixture.raw.drain(q);
    assert.equal(rest.length, 0);
    assert.ok(message, "message");
    assert.ok(message.content.equals(body), 'body is byte-identical');
    const p = message.properties;
    assert.equal(p.type, projection.urn);
    assert.equal(p.correlationId, projection.traceId);
    assert.equal(p.messageId, projection.messageId);
    assert.equal(p.appId, 'babelqueue');
    assert.equal(p.contentType, 'application/json');
    assert.equal(p.contentEncoding, 'utf-8');
    assert.equal(p.deliveryMode, 2);
    assert.deepEqual(p.headers, {
      'x-schema-version': 1,
      'x-source-lang': 'node',
      'x-attempts': 0,
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    assert.equal(message.fields.exchange, '', 'default exchange');
    assert.equal(message.fields.routingKey, q, 'routing key = queue');
  });

  it('declares the queue durable, non-exclusive and non-auto-delete', async () => {
    const q = queue('bq-rmq-durable');
    const { body, projection } = envelope('urn:babel:t:x', {}, q);
    await fixture.transport.publish({ body, queue: q, projection });
    // Re-declaring with the same properties succeeds; any other durability is refused (406).
    await fixture.raw.channel.assertQueue(q, { durable: true, exclusive: false, autoDelete: false });
    const probe = await fixture.raw.model.createChannel();
    probe.on('error', () => undefined);
    await assert.rejects(probe.assertQueue(q, { durable: false }), /PRECONDITION_FAILED/);
  });

  it('delays a publish through the <queue>.delay.<ms> holding queue', async () => {
    const q = queue('bq-rmq-delayed');
    fixture.alsoDelete(`${q}.delay.400`, `${q}.delay.600000`);
    // "Not there yet" is checked on a delay no round trip can reach; arrival on a short one.
    const far = envelope('urn:babel:t:x', { far: true }, q);
    await fixture.transport.publish({ ...far, queue: q, delayMs: 600_000 });
    assert.equal(await fixture.raw.count(`${q}.delay.600000`), 1, 'held in its holding queue');
    assert.equal(await fixture.raw.count(q), 0, 'not there before the delay');
    const { body, projection } = envelope('urn:babel:t:x', {}, q);
    const started = Date.now();
    await fixture.transport.publish({ body, queue: q, projection, delayMs: 400 });
    await fixture.raw.waitForCount(q, 1, 20_000);
    const waited = Date.now() - started;
    // Not before the delay; how much later depends on the machine's load, so no upper bound.
    assert.ok(waited >= 390, `arrived after ${waited} ms`);
    const [message] = await fixture.raw.drain(q);
    assert.ok(message!.content.equals(body), "message!.content.equals(body)");
    assert.equal(message!.properties.type, 'urn:babel:t:x');
    assert.equal(await fixture.raw.count(`${q}.delay.600000`), 1, 'the far one still waits');
  });

  it('rejects a publish the broker refuses (basic.nack) instead of resolving', async () => {
    const q = queue('bq-rmq-full');
    await fixture.raw.channel.assertQueue(q, { durable: true, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    const { body, projection } = envelope('urn:babel:t:x', {}, q);
    await assert.rejects(fixture.transport.publish({ body, queue: q, projection }), (error: unknown) => {
      assert.ok(error instanceof PublishNotConfirmedError, "error instanceof PublishNotConfirmedError");
      assert.match(error.message, /refused it \(basic\.nack\)/);
      return true;
    });
    // The channel survives: the next publish elsewhere works.
    const ok = queue('bq-rmq-after-nack');
    await fixture.transport.publish({ body, queue: ok, projection });
    assert.equal(await fixture.raw.count(ok), 1);
  });

  it('fails a publish whose queue was deleted after it was declared (mandatory + return), then declares it again', async () => {
    const q = queue('bq-rmq-vanished');
    const { body, projection } = envelope('urn:babel:t:x', {}, q);
    await fixture.transport.publish({ body, queue: q, projection });
    await fixture.raw.channel.deleteQueue(q);
    await assert.rejects(fixture.transport.publish({ body, queue: q, projection }), /unroutable/);
    await fixture.transport.publish({ body, queue: q, projection });
    assert.equal(await fixture.raw.count(q), 1);
  });

  it('uses a queue the user declared with other arguments (a native DLX) as it is', async () => {
    const q = queue('bq-rmq-native-dlx');
    const nativeDlq = queue('bq-rmq-native-dlx-target');
    await fixture.raw.channel.assertQueue(nativeDlq, { durable: true });
    await fixture.raw.channel.assertQueue(q, {
      durable: true,
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': nativeDlq, 'x-message-ttl': 100 },
    });
    const { body, projection } = envelope('urn:babel:t:x', {}, q);
    await fixture.transport.publish({ body, queue: q, projection });
    // The broker's own dead-lettering (TTL expiry here) still moves it.
    await fixture.raw.waitForCount(nativeDlq, 1, 20_000);
    const [message] = await fixture.raw.drain(nativeDlq);
    assert.ok(message!.content.equals(body), "message!.content.equals(body)");
  });

  it('resolves without waiting for the confirm when confirm is off', async () => {
    const fast = new RabbitMqTransport({ url, confirm: false, logger: silentLogger });
    try {
      const q = queue('bq-rmq-noconfirm');
      const { body, projection } = envelope('urn:babel:t:x', {}, q);
      await Promise.all(Array.from({ length: 50 }, () => fast.publish({ body, queue: q, projection })));
      await fixture.raw.waitForCount(q, 50);
    } finally {
      await fast.close();
    }
  });

  it('publishRaw writes bytes as they are; browse reads without consuming; purge empties', async () => {
    const q = queue('bq-rmq-tools');
    const records = [Buffer.from('{"raw":"x","dead_letter":{}}'), Buffer.from('{"a":1}'), Buffer.from('{"b":2}')];
    for (const record of records) await fixture.transport.publishRaw(q, record, { traceparent: 'tp' });
    const browsed = await fixture.transport.browse(q, 2);
    assert.deepEqual(browsed.map(String), records.slice(0, 2).map(String));
    assert.equal(await fixture.raw.count(q), 3, 'browsing consumed nothing');
    assert.deepEqual((await fixture.transport.browse(q, 10)).map(String), records.map(String), 'in the original order');
    assert.equal(await fixture.transport.purge(q), 3);
    assert.equal(await fixture.raw.count(q), 0);
    assert.deepEqual(await fixture.transport.browse('bq-rmq-no-such-queue', 5), []);
    assert.equal(await fixture.transport.purge('bq-rmq-no-such-queue'), 0);
    await fixture.transport.publishRaw(q, records[0]!);
    const [message] = await fixture.raw.drain(q);
    assert.equal(message!.properties.deliveryMode, 2);
    assert.equal(message!.properties.contentType, 'application/json');
  });

  it('fails a publish clearly when the broker is unreachable, without printing credentials', async () => {
    const down = new RabbitMqTransport({ url: 'amqp://alice:s3cr3t-pw@127.0.0.1:1/', logger: silentLogger });
    try {
      const q = 'bq-rmq-unreachable';
      const { body, projection } = envelope('urn:babel:t:x', {}, q);
      await assert.rejects(down.publish({ body, queue: q, projection }), (error: unknown) => {
        assert.ok(error instanceof RabbitMqUnavailableError, "error instanceof RabbitMqUnavailableError");
        assert.match(error.message, /amqp:\/\/alice:\*\*\*@127\.0\.0\.1:1/);
        assert.doesNotMatch(error.message, /s3cr3t/);
        return true;
      });
    } finally {
      await down.close();
    }
  });

  it('fails at once on refused credentials, without printing them', async () => {
    const parsed = new URL(url);
    parsed.password = 'definitely-wrong-pw';
    const wrong = new RabbitMqTransport({ url: parsed.href, logger: silentLogger });
    try {
      const q = 'bq-rmq-wrong-password';
      const { body, projection } = envelope('urn:babel:t:x', {}, q);
      await assert.rejects(wrong.publish({ body, queue: q, projection }), (error: unknown) => {
        assert.ok(error instanceof RabbitMqUnavailableError, "error instanceof RabbitMqUnavailableError");
        assert.match(error.message, /ACCESS.REFUSED/);
        assert.doesNotMatch(error.message, /definitely-wrong-pw/);
        return true;
      });
      // Refused before any connection succeeded: final, consumers do not spin (a spinning
      // consumer would never settle: the deadline turns that into a failure, not a hang).
      const consuming = wrong.consume(q, async () => undefined, { concurrency: 1, signal: new AbortController().signal });
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the consumer kept retrying refused credentials')), 30_000);
      });
      try {
        await assert.rejects(Promise.race([consuming, deadline]), /ACCESS.REFUSED/);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await wrong.close();
    }
  });
});
