import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createApp, EnvelopeCodec, silentLogger, type Envelope } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';
import { ArtemisTransport } from '@babelqueue/artemis';
import { artemis, artemisUrl, Raw, uniqueQueue } from './support/artemis.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);

/** The conformance fixture the manifest's Artemis block is written for. */
function fixture(): { body: Buffer; env: Envelope; block: Record<string, unknown> } {
  const shared = resolve(repoRoot, '../shared/conformance');
  const manifest = JSON.parse(readFileSync(join(shared, 'manifest.json'), 'utf8')) as { artemis: { property_projection: Record<string, unknown> } };
  const block = manifest.artemis.property_projection;
  const env = JSON.parse(readFileSync(join(shared, String(block.envelope_file)), 'utf8')) as Envelope;
  return { body: Buffer.from(EnvelopeCodec.encode(env), 'utf8'), env, block };
}

/** Artemis's own CLI (scripts/brokers installs it), for a JMS consumer on the CORE protocol. */
function artemisCli(): string | undefined {
  const home = process.env.BABELQUEUE_ARTEMIS_HOME ?? join(process.env.BABELQUEUE_BROKERS_DIR ?? join(repoRoot, '.brokers'), 'cache', 'apache-artemis-2.40.0');
  const cli = join(home, 'bin', 'artemis');
  return existsSync(cli) ? cli : undefined;
}

describe('Artemis projection, read back with rhea and by a JMS consumer', { skip: artemis.skip }, () => {
  let raw: Raw;
  let transport: ArtemisTransport;
  const created: string[] = [];
  const queue = (prefix: string) => {
    const name = uniqueQueue(`bq-art-${prefix}`);
    created.push(name);
    return name;
  };

  before(async () => {
    raw = await Raw.open();
    transport = new ArtemisTransport({ url: artemisUrl(), logger: silentLogger });
  });
  after(async () => {
    await transport.close();
    await raw.cleanup(...created);
    await raw.close();
  });

  it('the manifest block: x-opt-jms-type and subject = URN, correlation-id = trace_id, message-id = meta.id, creation-time = created_at, the bq_ properties exactly', async () => {
    const q = queue('projection');
    const { body, env, block } = fixture();
    await transport.publish({ body, queue: q, projection: envelopeProjection(env) });
    const [taken] = await raw.take(q);
    const m = taken!.message;
    assert.equal(typeof m.body, 'string', 'the envelope rides as an AMQP-value string section');
    assert.ok(taken!.body.equals(body), 'byte for byte');
    assert.deepEqual(m.message_annotations, { [String(block.jms_type_annotation)]: block.jms_type });
    assert.equal(m.subject, block.jms_type);
    assert.equal(m.correlation_id, block.correlation_id);
    assert.equal(m.message_id, env.meta.id);
    assert.equal((m.creation_time as Date).getTime(), env.meta.created_at);
    assert.equal(m.content_type, 'application/json');
    assert.equal(m.durable, true);
    assert.deepEqual(m.application_properties, block.properties);
  });

  it('a delayed publish: x-opt-delivery-time = now + delay, bq_delay mirrors it, and it is not delivered before', async () => {
    const q = queue('delay');
    const app = createApp({ transport, queue: q, logger: silentLogger });
    const at: number[] = [];
    app.handle('urn:babel:orders:created', () => void at.push(Date.now()));
    const sent = Date.now();
    await app.publish('urn:babel:orders:created', { order_id: 1 }, { delayMs: 1000 });
    assert.equal(await raw.count(q), 1, 'on the broker (scheduled)');
    const [peek] = await transport.browse(q, 1).then((b) => b.map(String));
    assert.equal(peek, undefined, 'a scheduled message is not browsable before it is due');
    assert.equal(await app.consume({ maxMessages: 1, idleMs: 10_000 }), 1);
    assert.ok(at[0]! - sent >= 990, `delivered ${at[0]! - sent} ms after the publish`);
    await raw.send(q, { body: 'probe' });
    const [probe] = await raw.take(q);
    assert.equal(probe!.body.toString(), 'probe', 'nothing else left');
  });

  it('the scheduled annotation and bq_delay as written on the wire', async () => {
    const q = queue('delay-wire');
    const { body, env } = fixture();
    const before = Date.now();
    await transport.publish({ body, queue: q, projection: envelopeProjection(env), delayMs: 300 });
    const until = Date.now() + 60_000;
    let taken: Awaited<ReturnType<Raw['take']>> = [];
    while (taken.length === 0 && Date.now() < until) {
      taken = await raw.take(q);
      if (taken.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    const m = taken[0]!.message;
    const due = Number(m.message_annotations?.['x-opt-delivery-time']);
    assert.ok(due >= before + 300 && due <= Date.now() + 300, `x-opt-delivery-time ${due - before} ms after the publish`);
    assert.equal(m.application_properties?.bq_delay, '300');
  });

  it('browse reads without consuming (distribution-mode copy); purge removes and counts', async () => {
    const q = queue('browse');
    for (const n of [1, 2, 3]) await transport.publishRaw(q, Buffer.from(`{"n":${n}}`));
    const bodies = await transport.browse(q, 2);
    assert.deepEqual(bodies.map(String), ['{"n":1}', '{"n":2}']);
    assert.deepEqual((await transport.browse(q, 10)).map(String), ['{"n":1}', '{"n":2}', '{"n":3}'], 'still all there');
    assert.equal(await raw.count(q), 3);
    assert.equal(await transport.purge(q), 3);
    assert.equal(await raw.count(q), 0);
    assert.deepEqual(await transport.browse(q, 10), []);
  });

  it('publishRaw of an accepted envelope projects it (a redriven message routes like a published one); riders ride the properties', async () => {
    const q = queue('raw');
    const { body, env } = fixture();
    await transport.publishRaw(q, body, { 'bq-replay-bypass': '1' });
    const [taken] = await raw.take(q);
    assert.ok(taken!.body.equals(body), 'byte for byte');
    assert.equal(taken!.message.message_annotations?.['x-opt-jms-type'], env.job);
    assert.equal(taken!.message.correlation_id, env.trace_id);
    assert.equal(taken!.message.application_properties?.['bq-replay-bypass'], '1', 'the header name as is (FACTS ambiguity #14)');
    assert.equal(taken!.message.application_properties?.bq_attempts, '0');
  });

  it('a raw body that is not UTF-8 goes as a data section, byte for byte', async () => {
    const q = queue('raw-bytes');
    await transport.publishRaw(q, Buffer.from([0xff, 0x00, 0x7b]));
    const [taken] = await raw.take(q);
    assert.equal(typeof taken!.message.body, 'object');
    assert.deepEqual([...taken!.body], [0xff, 0x00, 0x7b]);
  });

  it('a JMS consumer (Artemis CLI, CORE protocol) sees a TextMessage with JMSType = URN, JMSCorrelationID = trace_id, JMSTimestamp = created_at and the bq_ properties', async (t) => {
    const cli = artemisCli();
    if (cli === undefined) {
      if (process.env.CI === 'true') assert.fail('the Artemis CLI is missing: scripts/brokers up artemis installs it under .brokers/cache');
      t.skip('the Artemis CLI is not installed here (scripts/brokers up artemis installs it)');
      return;
    }
    const q = queue('jms');
    const { body, env } = fixture();
    await transport.publish({ body, queue: q, projection: envelopeProjection(env) });
    const dir = mkdtempSync(join(tmpdir(), 'bq-jms-'));
    try {
      const u = new URL(artemis.url!);
      const out = join(dir, 'out.xml');
      await run(cli, [
        'consumer', '--protocol', 'CORE', '--url', `tcp://${u.hostname}:61616`, '--user', decodeURIComponent(u.username), '--password', decodeURIComponent(u.password),
        '--destination', `queue://${q}`, '--filter', `JMSType = '${env.job}'`, '--message-count', '1', '--receive-timeout', '20000', '--data', out,
      ], { timeout: 240_000, env: { ...process.env, JAVA_ARGS: '-Xmx128m' } });
      const xml = readFileSync(out, 'utf8');
      assert.match(xml, /<message [^>]*type="text"/, 'a TextMessage (the AMQP-value string section)');
      assert.match(xml, new RegExp(`timestamp="${env.meta.created_at}"`), 'JMSTimestamp = created_at');
      const property = (name: string) => new RegExp(`<property name="${name}" value="([^"]*)"`).exec(xml)?.[1];
      assert.equal(property('JMSType'), env.job, 'the selector on JMSType matched, and JMSType is the URN');
      assert.equal(property('JMSCorrelationID'), env.trace_id);
      assert.equal(property('bq_schema_version'), '1');
      assert.equal(property('bq_source_lang'), 'php');
      assert.equal(property('bq_attempts'), '0');
      assert.equal(property('bq_app_id'), 'babelqueue');
      assert.equal(property('NATIVE_MESSAGE_ID'), `ID:AMQP_NO_PREFIX:${env.meta.id}`, 'the AMQP message-id; JMSMessageID stays broker-set');
      assert.ok(xml.includes(body.toString('utf8')), 'the body, as text');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
