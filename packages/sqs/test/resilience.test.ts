import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError, createApp } from '@babelqueue/core';
import { SqsTransport } from '@babelqueue/sqs';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { within } from '../../../test/support/until.js';
import { CREDENTIALS, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';

describe('SQS request time-out (options)', () => {
  const base = { endpoint: 'http://127.0.0.1:1', region: REGION, credentials: CREDENTIALS };

  it('refuses a time-out that leaves a long poll less than 5 s beyond its wait', () => {
    assert.throws(() => new SqsTransport({ ...base, waitTimeSeconds: 20, requestTimeoutMs: 24_999 }), ConfigurationError, '20 s poll + 5 s > 24,999 ms');
    assert.doesNotThrow(() => new SqsTransport({ ...base, waitTimeSeconds: 20, requestTimeoutMs: 25_000 }), 'exactly the poll plus 5 s is enough');
    assert.throws(() => new SqsTransport({ ...base, requestTimeoutMs: 0 }), ConfigurationError, 'zero is no time-out');
  });

  it('refuses requestTimeoutMs beside an HTTP handler of the caller\'s, which the binding does not configure', () => {
    assert.throws(
      () => new SqsTransport({ ...base, requestTimeoutMs: 30_000, clientConfig: { requestHandler: { requestTimeout: 5_000 } } }),
      /set the time-out on that handler/,
      'the two settings contradict each other',
    );
  });
});

describe('SQS behind an endpoint that stays silent', { skip: sqs.skip }, () => {
  let raw: Raw;
  let proxy: CuttableProxy;
  before(async () => {
    raw = new Raw();
    const { hostname, port } = new URL(sqs.url!);
    proxy = new CuttableProxy({ host: hostname, port: Number(port) });
    await proxy.start();
  });
  after(async () => {
    await proxy.down();
    await raw.close();
  });

  it('a request the endpoint takes and never answers is abandoned after requestTimeoutMs and sent again', async () => {
    const { name, url } = await raw.fresh('silent');
    const endpoint = proxy.url(sqs.url!).replace(/\/$/, '');
    // Queue URLs through the relay too (ElasticMQ names its own address in GetQueueUrl).
    const { transport: t } = transport({ endpoint, queueUrlPrefix: `${endpoint}/000000000000`, waitTimeSeconds: 0, requestTimeoutMs: 5_000 });
    const app = createApp({ transport: t, queue: name });
    const started = Date.now();
    try {
      proxy.muteNext();
      await within(app.publish(URN, { n: 1 }), 60_000, 'the publish to go through on a second connection');
    } finally {
      await app.close();
    }
    assert.ok(Date.now() - started >= 4_500, 'the first request waited on the silent connection until its time-out');
    const messages = await raw.drain(url);
    assert.equal(messages.length, 1, 'the message arrived once');
  });
});
