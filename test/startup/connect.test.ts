// Honest start-up on the real brokers: `Transport.connect` succeeds against the
// lab broker, and an unreachable port, an unknown host or refused credentials
// end in one clear ConnectError (credentials masked) instead of silent retries.
// No wall-clock assertion: the connect deadline itself bounds every row.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArtemisTransport } from '@babelqueue/artemis';
import { ConnectError, silentLogger, type Transport } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { KafkaTransport } from '@babelqueue/kafka';
import { PulsarTransport } from '@babelqueue/pulsar';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { RedisTransport } from '@babelqueue/redis';
import { SqsTransport } from '@babelqueue/sqs';
import { broker } from '../support/brokers.js';

const TIMEOUT_MS = 3_000;

interface Row {
  readonly name: string;
  readonly make: (url: string) => Transport;
  /** The URL of the lab broker with the host, port or credentials swapped. */
  readonly bad: {
    readonly what: string;
    readonly url: (good: string) => string;
    readonly expect: RegExp;
    /** Builds the transport when the row needs more than another URL. */
    readonly make?: (url: string) => Transport;
  }[];
}

/** A TCP port on loopback that nothing listens on (port 1 needs root to serve and nobody does). */
const CLOSED = '127.0.0.1:1';

/** Any static key works on the lab's SQS-compatible server. */
const SQS_KEY = { accessKeyId: 'babelqueue', secretAccessKey: 'hunter2' };

const ROWS: [Parameters<typeof broker>[0], Row][] = [
  ['redis', {
    name: 'redis',
    make: (url) => new RedisTransport({ url, logger: silentLogger }),
    bad: [
      { what: 'a closed port', url: () => `redis://${CLOSED}`, expect: /no answer within 3000 ms \(last error: connect ECONNREFUSED/ },
      { what: 'an unknown host', url: () => 'redis://no-such-host.invalid:6379', expect: /ENOTFOUND no-such-host\.invalid/ },
      { what: 'refused credentials', url: (good) => good.replace('redis://', 'redis://nobody:hunter2@'), expect: /WRONGPASS/ },
    ],
  }],
  ['rabbitmq', {
    name: 'rabbitmq',
    make: (url) => new RabbitMqTransport({ url, logger: silentLogger }),
    bad: [
      { what: 'a closed port', url: () => `amqp://guest:hunter2@${CLOSED}`, expect: /no answer within 3000 ms \(last error: .*ECONNREFUSED/ },
      { what: 'refused credentials', url: (good) => good.replace(/\/\/[^@]*@/, '//guest:hunter2@'), expect: /ACCESS_REFUSED/ },
    ],
  }],
  // Service Bus through the stand-in. No refused-credentials row: the stand-in
  // accepts any SAS key and any CBS token (it does not validate signatures), so
  // the refusal a real namespace answers with cannot be produced here.
  ['asb', {
    name: 'asb (stand-in)',
    make: (url) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger }),
    bad: [
      {
        what: 'a closed port',
        url: (good) => good.replace(/Endpoint=sb:\/\/[^;]*/i, `Endpoint=sb://${CLOSED}`).replace(/SharedAccessKey=[^;]*/i, 'SharedAccessKey=hunter2'),
        expect: /no answer within 3000 ms \(last error: .*ECONNREFUSED/,
      },
      {
        what: 'an unknown host',
        url: (good) => good.replace(/Endpoint=sb:\/\/[^;:]*/i, 'Endpoint=sb://no-such-host.invalid').replace(/SharedAccessKey=[^;]*/i, 'SharedAccessKey=hunter2'),
        expect: /ENOTFOUND no-such-host\.invalid/,
      },
    ],
  }],
  // The lab's URL is the endpoint of its SQS-compatible server (any static key
  // works there, so refused credentials cannot be shown; missing ones can).
  ['sqs', {
    name: 'sqs',
    make: (url) => new SqsTransport({ endpoint: url, region: 'us-east-1', credentials: SQS_KEY, logger: silentLogger }),
    bad: [
      { what: 'a closed port', url: () => `http://${CLOSED}`, expect: /no answer within 3000 ms \(last error: connect ECONNREFUSED/ },
      { what: 'an unknown host', url: () => 'http://no-such-host.invalid:9324', expect: /ENOTFOUND no-such-host\.invalid/ },
      {
        what: 'no credentials',
        url: (good) => good,
        expect: /no credentials here/,
        make: (url) => new SqsTransport({
          endpoint: url,
          region: 'us-east-1',
          credentials: () => Promise.reject(Object.assign(new Error('no credentials here'), { name: 'CredentialsProviderError' })),
          logger: silentLogger,
        }),
      },
    ],
  }],
  ['kafka', {
    name: 'kafka',
    make: (url) => new KafkaTransport({ url, logger: silentLogger, kafka: { retry: { retries: 1 } } }),
    bad: [
      { what: 'a closed port', url: () => `kafka://${CLOSED}`, expect: /ECONNREFUSED|no answer within 3000 ms/ },
    ],
  }],
  ['pulsar', {
    name: 'pulsar',
    make: (url) => new PulsarTransport({ url, logger: silentLogger }),
    bad: [
      { what: 'a closed port', url: () => `pulsar://127.0.0.1:6650?http=1&token=hunter2`, expect: /no answer within 3000 ms \(last error: .*ECONNREFUSED/ },
      { what: 'an unknown host', url: () => 'pulsar://no-such-host.invalid:6650', expect: /ENOTFOUND no-such-host\.invalid/ },
      { what: 'an unknown tenant', url: (good) => `${good}?tenant=no-such-tenant`, expect: /HTTP 404/ },
    ],
  }],
  ['artemis', {
    name: 'artemis',
    make: (url) => new ArtemisTransport({ url, logger: silentLogger }),
    bad: [
      { what: 'a closed port', url: () => `artemis://admin:hunter2@${CLOSED}`, expect: /no answer within 3000 ms \(last error: .*ECONNREFUSED/ },
      { what: 'an unknown host', url: () => 'artemis://no-such-host.invalid:5672', expect: /ENOTFOUND no-such-host\.invalid/ },
      // No refused-credentials row: the lab's Artemis allows anonymous, and its guest
      // login module takes any failed login as the guest user. packages/artemis tests
      // a refused SASL login against an AMQP peer that refuses it.
    ],
  }],
];

for (const [name, row] of ROWS) {
  const lab = broker(name);
  describe(`connect at start-up: ${row.name}`, { skip: lab.skip }, () => {
    test('the lab broker connects, and a second connect resolves at once', async () => {
      const transport = row.make(lab.url!);
      try {
        await transport.connect({ timeoutMs: 30_000 });
        await transport.connect({ timeoutMs: 30_000 });
      } finally {
        await transport.close();
      }
    });

    for (const bad of row.bad) {
      test(`${bad.what}: one ConnectError naming the masked target, then close() leaves nothing running`, async () => {
        const transport = (bad.make ?? row.make)(bad.url(lab.url!));
        try {
          await assert.rejects(transport.connect({ timeoutMs: TIMEOUT_MS }), (e: Error) => {
            assert.ok(e instanceof ConnectError, `${e.name}: ${e.message}`);
            assert.match(e.message, /^cannot connect to /);
            assert.match(e.message, bad.expect);
            assert.ok(!e.message.includes('hunter2'), 'the password is masked');
            return true;
          });
        } finally {
          await transport.close();
        }
      });
    }
  });
}
