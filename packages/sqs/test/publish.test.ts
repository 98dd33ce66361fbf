import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, EnvelopeCodec, PublishManyError, type Envelope, type OutgoingMessage } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';
import { DelayNotSupportedError, InvalidBodyError, MessageTooLargeError, QueueNotFoundError, TransportClosedError } from '@babelqueue/sqs';
import { suites } from '../../core/test/conformance/suite.js';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { attributesOf, CREDENTIALS, envelope, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('SQS publish', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  for (const { suite, name, skip } of suites) {
    it(`projects the conformance attributes exactly (${name}), body byte for byte`, { skip }, async () => {
      const block = suite!.manifest.sqs!.attribute_projection;
      const body = suite!.fixture(block.envelope_file);
      const { name: queue, url } = await raw.fresh('projection');
      const { transport: t } = transport();
      try {
        await t.publish({ body, queue, projection: envelopeProjection(EnvelopeCodec.decode(body.toString('utf8')) as Envelope) });
      } finally {
        await t.close();
      }
      const [m] = await raw.drain(url);
      assert.ok(Buffer.from(m!.Body!, 'utf8').equals(body), 'MessageBody = the envelope bytes');
      assert.deepEqual(m!.MessageAttributes, block.message_attributes);
    });
  }

  it('riders ride String attributes beside the contract, which wins a collision; blank ones are dropped', async () => {
    const { name: queue, url } = await raw.fresh('riders');
    const { transport: t } = transport();
    const app = createApp({ transport: t, queue });
    try {
      await app.publish(URN, { a: 1 }, { headers: { traceparent: TRACEPARENT, tracestate: 'vendor=1', 'bq-job': 'urn:babel:forged', blank: ' ' } });
    } finally {
      await app.close();
    }
    const [m] = await raw.drain(url);
    const attributes = attributesOf(m);
    assert.equal(attributes.traceparent, `String:${TRACEPARENT}`);
    assert.equal(attributes.tracestate, 'String:vendor=1');
    assert.equal(attributes['bq-job'], `String:${URN}`);
    assert.equal(attributes.blank, undefined);
    assert.equal(Object.keys(attributes).length, 8);
  });

  it('riders count toward SQS\'s 10 attributes: beyond them they are left out, the contract always kept', async () => {
    const { name: queue, url } = await raw.fresh('ten');
    const { transport: t } = transport();
    const headers = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`r${i}`, `v${i}`]));
    const app = createApp({ transport: t, queue });
    try {
      await app.publish(URN, {}, { headers });
    } finally {
      await app.close();
    }
    const names = Object.keys((await raw.drain(url))[0]!.MessageAttributes!).sort();
    assert.deepEqual(names, ['bq-created-at', 'bq-job', 'bq-message-id', 'bq-schema-version', 'bq-source-lang', 'bq-trace-id', 'r0', 'r1', 'r2', 'r3']);
  });

  describe('FIFO', () => {
    it('MessageGroupId is the queue name by default; MessageDeduplicationId = meta.id drops a second send of the same envelope', async () => {
      const { name: queue, url } = await raw.fresh('fifo', { fifo: true });
      const { transport: t } = transport();
      const first = envelope(URN, { n: 1 }, queue);
      const second = envelope(URN, { n: 2 }, queue);
      try {
        await t.publish({ body: first.body, queue, projection: first.projection });
        await t.publish({ body: first.body, queue, projection: first.projection });
        await t.publish({ body: second.body, queue, projection: second.projection });
      } finally {
        await t.close();
      }
      const got = await raw.drain(url, 2);
      assert.deepEqual(got.map((m) => m.Body), [first.body.toString(), second.body.toString()], 'in order, the duplicate dropped');
      assert.deepEqual(got.map((m) => m.Attributes!.MessageGroupId), [queue, queue]);
      assert.deepEqual(got.map((m) => m.Attributes!.MessageDeduplicationId), [first.projection.messageId, second.projection.messageId]);
    });

    it('the messageGroupId option, and a publish key overriding it per message', async () => {
      const { name: queue, url } = await raw.fresh('fifo-group', { fifo: true });
      const { transport: t } = transport({ messageGroupId: 'tenant-a' });
      const app = createApp({ transport: t, queue });
      try {
        await app.publish(URN, { n: 1 });
        await app.publish(URN, { n: 2 }, { key: 'customer-42' });
      } finally {
        await app.close();
      }
      const groups = (await raw.drain(url, 2)).map((m) => m.Attributes!.MessageGroupId).sort();
      assert.deepEqual(groups, ['customer-42', 'tenant-a']);
    });

    it('a queue with content-based deduplication gets no MessageDeduplicationId (SQS hashes the body)', async () => {
      const { name: queue, url } = await raw.fresh('fifo-cbd', { fifo: true, attributes: { ContentBasedDeduplication: 'true' } });
      const { transport: t } = transport();
      const one = envelope(URN, {}, queue);
      try {
        await t.publish({ body: one.body, queue, projection: one.projection });
        // The same bytes under another meta.id in the projection: deduplicated by content, not by id.
        await t.publish({ body: one.body, queue, projection: { ...one.projection, messageId: 'another-id' } });
      } finally {
        await t.close();
      }
      const got = await raw.drain(url);
      assert.equal(got.length, 1);
      assert.notEqual(got[0]!.Attributes!.MessageDeduplicationId, one.projection.messageId);
    });

    it('a per-message delay is refused before anything is sent', async () => {
      const { name: queue, url } = await raw.fresh('fifo-delay', { fifo: true });
      const { transport: t } = transport();
      const app = createApp({ transport: t, queue });
      try {
        await assert.rejects(app.publish(URN, {}, { delayMs: 1000 }), (e: Error) =>
          e instanceof DelayNotSupportedError && /FIFO queue .* takes no per-message delay .*nothing was sent/.test(e.message));
      } finally {
        await app.close();
      }
      assert.deepEqual(await raw.counts(url), { visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe('delays', () => {
    it('DelaySeconds = ceil(delayMs / 1000): not visible before, then delivered', async () => {
      const { name: queue, url } = await raw.fresh('delay');
      const { transport: t } = transport();
      const app = createApp({ transport: t, queue });
      const sentAt = Date.now();
      try {
        await app.publish(URN, {}, { delayMs: 1500 });
      } finally {
        await app.close();
      }
      // Any look within the first second cannot see it, whatever the machine's load.
      assert.equal(await raw.peek(url), undefined, 'not visible right after the publish');
      assert.equal((await raw.counts(url)).delayed, 1);
      const arrived = await raw.until('the delayed message', () => raw.peek(url, 30, 1), (m) => m !== undefined);
      assert.ok(Date.now() - sentAt >= 1900, 'a 1.5 s delay is 2 whole seconds');
      assert.equal(arrived!.MessageAttributes!['bq-job']!.StringValue, URN);
    });

    it('a delay over 900 s is refused with a clear error before anything is sent', async () => {
      const { name: queue, url } = await raw.fresh('over-delay');
      const { transport: t } = transport();
      const app = createApp({ transport: t, queue });
      try {
        await app.publish(URN, {}, { delayMs: 900_000 });
        await assert.rejects(app.publish(URN, {}, { delayMs: 900_001 }), (e: Error) =>
          e instanceof DelayNotSupportedError && e.message === 'SQS delays a message at most 900 s; delayMs=900001 is 901 s; nothing was sent');
      } finally {
        await app.close();
      }
      assert.deepEqual(await raw.counts(url), { visible: 0, inFlight: 0, delayed: 1 }, 'only the 900 s one');
    });
  });

  describe('refusals', () => {
    it('a message over the queue\'s maximum size is refused naming the size; never truncated, nothing sent', async () => {
      const { name: queue, url } = await raw.fresh('too-large');
      const { transport: t } = transport();
      const app = createApp({ transport: t, queue });
      try {
        // ElasticMQ reports no MaximumMessageSize: the SQS ceiling of 1 MiB applies.
        await assert.rejects(app.publish(URN, { blob: 'x'.repeat(1_048_576) }), (e: Error) => {
          assert.ok(e instanceof MessageTooLargeError, e.message);
          assert.equal(e.limit, 1_048_576);
          assert.ok(e.bytes > 1_048_576, `bytes ${e.bytes}`);
          assert.match(e.message, new RegExp(`^message of ${e.bytes} bytes \\(body and attributes\\) is over the 1048576-byte maximum of SQS queue "${queue}"; nothing was sent$`));
          return true;
        });
      } finally {
        await app.close();
      }
      assert.deepEqual(await raw.counts(url), { visible: 0, inFlight: 0, delayed: 0 });
    });

    it('the size counts the attributes too, against maxMessageBytes when set', async () => {
      const { name: queue, url } = await raw.fresh('too-large-attributes');
      const one = envelope(URN, {}, queue);
      const { transport: t } = transport({ maxMessageBytes: one.body.length + 50 });
      try {
        await assert.rejects(t.publish({ body: one.body, queue, projection: one.projection }), MessageTooLargeError);
      } finally {
        await t.close();
      }
      assert.equal((await raw.counts(url)).visible, 0);
    });

    it('a body that is not valid UTF-8, or empty, or with a character SQS does not carry, is refused, never rewritten', async () => {
      const { name: queue, url } = await raw.fresh('bad-body');
      const { transport: t } = transport();
      try {
        await assert.rejects(t.publishRaw(queue, Buffer.from([0x7b, 0xff, 0x7d])), (e: Error) => e instanceof InvalidBodyError && /not valid UTF-8/.test(e.message));
        await assert.rejects(t.publishRaw(queue, Buffer.alloc(0)), (e: Error) => e instanceof InvalidBodyError && /empty/.test(e.message));
        await assert.rejects(t.publishRaw(queue, Buffer.from('a\u0001b')), (e: Error) => e instanceof InvalidBodyError && /U\+0001 at byte 1/.test(e.message));
        await assert.rejects(t.publishRaw(queue, Buffer.from('é\uffff')), (e: Error) => e instanceof InvalidBodyError && /U\+FFFF at byte 2/.test(e.message));
        await t.publishRaw(queue, Buffer.from('tab\t, LF\n, CR\r, \ufffd and 😀 are fine'));
      } finally {
        await t.close();
      }
      assert.equal((await raw.drain(url)).map((m) => m.Body).join(), 'tab\t, LF\n, CR\r, \ufffd and 😀 are fine');
    });

    it('an unknown queue is a QueueNotFoundError; createQueues creates it (FIFO by name)', async () => {
      const { transport: t } = transport();
      const name = `bq-sqs-missing-${process.pid}-${Date.now().toString(36)}`;
      const one = envelope(URN, {}, name);
      try {
        await assert.rejects(t.publish({ body: one.body, queue: name, projection: one.projection }), (e: Error) =>
          e instanceof QueueNotFoundError && e.message.startsWith(`the SQS queue "${name}" does not exist`));
      } finally {
        await t.close();
      }
      const { transport: creating } = transport({ createQueues: true });
      try {
        await creating.publish({ body: one.body, queue: `${name}.fifo`, projection: one.projection });
      } finally {
        await creating.close();
      }
      const url = await raw.queue(`${name}.fifo`); // already there: CreateQueue returns its URL (and registers it for clean-up)
      const [m] = await raw.drain(url);
      assert.equal(m!.Attributes!.MessageGroupId, `${name}.fifo`);
    });

    it('a closed transport refuses work', async () => {
      const { transport: t } = transport();
      await t.close();
      await t.close();
      await assert.rejects(t.publishRaw('any', Buffer.from('{}')), TransportClosedError);
    });
  });

  it('the raw drain of these tests polls on until the expected count: a message not visible yet is not missed', async () => {
    const { url } = await raw.fresh('drain');
    await raw.client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'now' }));
    // Visible only after the first receive came back empty: the case a busy machine produces by chance.
    await raw.client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 3 }));
    assert.deepEqual((await raw.drain(url, 2)).map((m) => m.Body).sort(), ['later', 'now']);
  });

  describe('publishMany (SendMessageBatch)', () => {
    const many = (queue: string, n: number): OutgoingMessage[] =>
      Array.from({ length: n }, (_, i) => {
        const { body, projection } = envelope(URN, { i }, queue);
        return { body, queue, projection };
      });

    it('sends 23 messages in batches of 10 and reports each one', async () => {
      const { name: queue, url } = await raw.fresh('many');
      // A client of our own, counting the batch calls.
      const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
      let calls = 0;
      client.middlewareStack.add((next) => async (args) => {
        if ((args.input as { Entries?: unknown[] }).Entries !== undefined) calls += 1;
        return next(args);
      }, { step: 'initialize' });
      const { transport: t } = transport({ client });
      const messages = many(queue, 23);
      let results;
      try {
        results = await t.publishMany(messages);
      } finally {
        await t.close();
        client.destroy();
      }
      assert.equal(calls, 3, '10 + 10 + 3');
      assert.deepEqual(results.map((r) => r.ok), messages.map(() => true));
      assert.deepEqual(results.map((r) => r.messageId), messages.map((m) => m.projection.messageId));
      const bodies = (await raw.drain(url, messages.length)).map((m) => m.Body).sort();
      assert.deepEqual(bodies, messages.map((m) => m.body.toString()).sort());
    });

    it('one entry refused by SQS and one refused before sending: each reported, the others delivered, nothing silently lost', async () => {
      const { name: queue, url } = await raw.fresh('many-partial');
      const { transport: t } = transport();
      const messages = many(queue, 5);
      // A rider value with a character SQS does not carry: SQS fails that entry alone (InvalidMessageContents).
      messages[1] = { ...messages[1]!, headers: { traceparent: 'bad\u0001value' } };
      // Over the size limit: refused here, never sent.
      const big = envelope(URN, { blob: 'x'.repeat(1_100_000) }, queue);
      messages[3] = { body: big.body, queue, projection: big.projection };
      let results;
      try {
        results = await t.publishMany(messages);
      } finally {
        await t.close();
      }
      assert.deepEqual(results.map((r) => r.ok), [true, false, true, false, true]);
      const failed1 = results[1]!;
      assert.ok(!failed1.ok && failed1.error.name === 'BatchEntryError' && /InvalidMessageContents/.test(failed1.error.message), String(!failed1.ok && failed1.error));
      const failed3 = results[3]!;
      assert.ok(!failed3.ok && failed3.error instanceof MessageTooLargeError, 'the oversized one is refused here');
      const bodies = (await raw.drain(url, 3)).map((m) => m.Body).sort();
      assert.deepEqual(bodies, [0, 2, 4].map((i) => messages[i]!.body.toString()).sort());
    });

    it('each message carries what a single publish gives it: body, attributes with riders, delay', async () => {
      const single = await raw.fresh('many-same-single');
      const batched = await raw.fresh('many-same-batch');
      const { transport: t } = transport();
      const messages = many(single.name, 4).map((m) => ({ ...m, headers: { traceparent: TRACEPARENT } }));
      try {
        for (const m of messages) await t.publish(m);
        assert.ok((await t.publishMany(messages.map((m) => ({ ...m, queue: batched.name })))).every((r) => r.ok), 'every message accepted');
      } finally {
        await t.close();
      }
      const byId = (got: { MessageAttributes?: Record<string, { StringValue?: string }> }[]) =>
        [...got].sort((x, y) => String(x.MessageAttributes?.['bq-message-id']?.StringValue).localeCompare(String(y.MessageAttributes?.['bq-message-id']?.StringValue)));
      const a = byId(await raw.drain(single.url, 4));
      const c = byId(await raw.drain(batched.url, 4));
      assert.equal(c.length, 4);
      c.forEach((got, i) => {
        assert.equal((got as { Body?: string }).Body, (a[i] as { Body?: string }).Body, `message ${i} body`);
        assert.deepEqual(got.MessageAttributes, a[i]!.MessageAttributes, `message ${i} attributes`);
      });
    });

    it('through the App: an oversized item rejects with a PublishManyError naming it; the others are delivered', async () => {
      const { name: queue, url } = await raw.fresh('many-app');
      const { transport: t } = transport();
      const app = createApp({ transport: t, queue });
      let error: unknown;
      try {
        error = await app.publishMany(URN, [{ i: 0 }, { blob: 'x'.repeat(1_100_000) }, { i: 2 }]).catch((e: unknown) => e);
      } finally {
        await app.close();
      }
      assert.ok(error instanceof PublishManyError, 'a PublishManyError');
      assert.deepEqual(error.failed, [1]);
      assert.ok(error.errors[0] instanceof MessageTooLargeError, 'the reason is the size');
      const ids = (await raw.drain(url, 2)).map((m) => JSON.parse(m.Body!).meta.id).sort();
      assert.deepEqual(ids, [error.results[0]!.id, error.results[2]!.id].sort());
    });

    it('a queue that cannot be used fails each message, with the reason', async () => {
      const { transport: t } = transport();
      const queue = `bq-sqs-nowhere-${process.pid}`;
      try {
        const results = await t.publishMany(many(queue, 3));
        assert.ok(results.every((r) => !r.ok && r.error instanceof QueueNotFoundError), 'every message fails with QueueNotFoundError');
      } finally {
        await t.close();
      }
    });

    it('FIFO: order kept (one batch call at a time), group and deduplication ids per message', async () => {
      const { name: queue, url } = await raw.fresh('many-fifo', { fifo: true });
      // A client of our own, counting the batch calls in flight at once.
      const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
      let inFlight = 0;
      let most = 0;
      client.middlewareStack.add((next) => async (args) => {
        if ((args.input as { Entries?: unknown[] }).Entries === undefined) return next(args);
        most = Math.max(most, ++inFlight);
        try {
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      }, { step: 'initialize' });
      const { transport: t } = transport({ client });
      const messages = many(queue, 12);
      try {
        assert.ok((await t.publishMany([...messages, messages[0]!])).every((r) => r.ok), 'every message accepted');
      } finally {
        await t.close();
        client.destroy();
      }
      assert.equal(most, 1, 'a later batch never overtakes an earlier one');
      const got = await raw.drain(url, messages.length);
      assert.deepEqual(got.map((m) => m.Body), messages.map((m) => m.body.toString()), 'in order, the repeated first one deduplicated');
    });
  });
});
