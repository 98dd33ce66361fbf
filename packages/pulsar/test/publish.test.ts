// Producing on the lab's Pulsar: the projection read back with a raw
// WebSocket consumer, send receipts, delays, browse and purge.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createApp, silentLogger, type Envelope } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';
import { PublishNotConfirmedError, PulsarTransport } from '@babelqueue/pulsar';
import { publishFixture } from './support/publish-fixture.js';
import { lab, uniqueQueue } from './support/pulsar.js';

const URN = 'urn:babel:orders:created';
const shared = resolve(import.meta.dirname, '../../../../shared/conformance');

describe('Pulsar produce', { skip: lab.skip }, () => {
  const fixture = publishFixture('bq-pulsar-pub');
  const { url, raw, queue } = fixture;

  it('projects the conformance fixture onto exactly the manifest properties, payload byte for byte', async () => {
    const manifest = JSON.parse(readFileSync(join(shared, 'manifest.json'), 'utf8'));
    const block = manifest.pulsar.property_projection;
    const body = readFileSync(join(shared, block.envelope_file));
    const compact = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))), 'utf8');
    const q = queue('projection');
    await fixture.transport.publish({ body: compact, queue: q, projection: envelopeProjection(JSON.parse(compact.toString('utf8')) as Envelope) });
    const [got] = await raw.take(q, 1);
    assert.ok(got!.body.equals(compact), 'the payload is the envelope bytes');
    assert.deepEqual(got!.properties, block.properties);
    for (const value of Object.values(got!.properties)) assert.equal(typeof value, 'string');
  });

  it('a resolved publish is stored: on the topic at once, with the riders as properties and no eventTime', async () => {
    const q = queue('stored');
    const app = createApp({ transport: fixture.transport, queue: q, logger: silentLogger });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const id = await app.publish(URN, { order_id: 1 }, { headers: { traceparent, tracestate: 'k=v', 'bq-job': 'not:this', blank: ' ' } });
    assert.equal(await raw.backlog(q), 1, 'the backlog holds it as soon as publish resolved');
    const [got] = await raw.take(q, 1);
    const env = JSON.parse(got!.body.toString('utf8'));
    assert.equal(env.meta.id, id);
    assert.equal(got!.properties.traceparent, traceparent);
    assert.equal(got!.properties.tracestate, 'k=v');
    assert.equal(got!.properties['bq-job'], URN, 'a contract key always wins over a rider');
    assert.equal(got!.properties.blank, undefined, 'blank riders are dropped');
    assert.equal(got!.properties['bq-message-id'], id);
    assert.equal(got!.properties['bq-delay'], undefined);
  });

  it('a delayed publish carries bq-delay and is held by the broker until it is due, within one delivery tick (broker publish time)', async () => {
    const q = queue('delay');
    const app = createApp({ transport: fixture.transport, queue: q, logger: silentLogger });
    await app.publish(URN, { which: 'late' }, { delayMs: 2500 });
    await app.publish(URN, { which: 'now' });
    const [first, second] = await raw.take(q, 2, 30_000);
    // Published second but delivered first: the broker held the delayed one.
    assert.equal(JSON.parse(first!.body.toString('utf8')).data.which, 'now');
    assert.equal(JSON.parse(second!.body.toString('utf8')).data.which, 'late');
    assert.equal(second!.properties['bq-delay'], '2500');
    // Not strict by default: Pulsar may deliver up to one tick
    // (delayedDeliveryTickTimeMillis, 1000 ms) before the message is due.
    assert.ok(
      second!.receivedAt >= second!.publishTime + 2500 - 1000,
      `delivered ${second!.receivedAt - second!.publishTime} ms after the broker stored it`,
    );
  });

  it('Pulsar honours a delay only on Shared and Key_Shared: an Exclusive subscription gets a delayed message at once', async () => {
    const q = queue('delay-exclusive');
    const app = createApp({ transport: fixture.transport, queue: q, logger: silentLogger });
    await app.publish(URN, {}, { delayMs: 120_000 });
    // Well inside the two minutes: the broker did not hold it for this subscription type.
    const [got] = await raw.take(q, 1, 30_000, 'Exclusive');
    assert.equal(got!.properties['bq-delay'], '120000');
  });

  it('publishRaw writes the bytes and the given properties only', async () => {
    const q = queue('raw');
    const body = Buffer.from([0xff, 0x00, 0x7b]);
    await fixture.transport.publishRaw(q, body, { 'x-tool': 'redrive' });
    const [got] = await raw.take(q, 1);
    assert.ok(got!.body.equals(body), 'the bytes as given');
    assert.deepEqual(got!.properties, { 'x-tool': 'redrive' });
  });

  it('a publish the broker refuses rejects with PublishNotConfirmedError (a terminated topic)', async () => {
    const q = queue('refused');
    await raw.terminate(q);
    const app = createApp({ transport: new PulsarTransport({ url, logger: silentLogger }), queue: q, logger: silentLogger });
    try {
      await assert.rejects(app.publish(URN, {}), (error: Error) => {
        assert.ok(error instanceof PublishNotConfirmedError || error.name === 'PulsarRefusedError', `${error.name}: ${error.message}`);
        assert.match(error.message, /terminated|refused/i);
        return true;
      });
    } finally {
      await app.close();
    }
  });

  it('browse peeks the subscription backlog without consuming; purge empties it and counts', async () => {
    const q = queue('browse');
    const app = createApp({ transport: fixture.transport, queue: q, logger: silentLogger });
    await app.publish(URN, { n: 1 });
    await app.publish(URN, { n: 2 });
    await app.publish(URN, { n: 3 });
    const bodies = await fixture.transport.browse(q, 2);
    assert.deepEqual(bodies.map((b) => JSON.parse(b.toString('utf8')).data.n), [1, 2]);
    assert.equal((await fixture.transport.browse(q, 10)).length, 3);
    assert.equal(await raw.backlog(q), 3, 'browsing consumed nothing');
    assert.equal(await fixture.transport.purge(q), 3);
    await raw.waitForBacklog(q, 0);
    assert.deepEqual(await fixture.transport.browse(uniqueQueue('bq-pulsar-absent'), 5), [], 'a missing topic browses as empty');
    assert.equal(await fixture.transport.purge(uniqueQueue('bq-pulsar-absent')), 0);
  });

  it('a queue name with "/" is refused; a full topic name is used as is', async () => {
    await assert.rejects(createApp({ transport: fixture.transport, queue: 'a/b', logger: silentLogger }).publish(URN, {}), /local name/);
    const local = queue('full');
    const app = createApp({ transport: fixture.transport, queue: `persistent://public/default/${local}`, logger: silentLogger });
    await app.publish(URN, {});
    assert.equal((await raw.take(local, 1)).length, 1);
  });
});
