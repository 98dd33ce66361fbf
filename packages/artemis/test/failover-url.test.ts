import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { describe, it } from 'node:test';
import { ConfigurationError, createApp, silentLogger } from '@babelqueue/core';
import { ArtemisTransport, parseArtemisUrl, parseArtemisUrls } from '@babelqueue/artemis';
import { artemis, captureLogger, uniqueQueue } from './support/artemis.js';

const URN = 'urn:babel:orders:created';

describe('Artemis failover URL (Qpid JMS form)', () => {
  it('reads failover:(a,b) into the brokers in order, each with its own scheme, port and credentials', () => {
    const endpoints = parseArtemisUrls('failover:(amqp://u:p%40ss@primary:15673, artemis+ssl://backup)');
    assert.deepEqual(endpoints.map(({ host, port, tls, username, password }) => ({ host, port, tls, username, password })), [
      { host: 'primary', port: 15673, tls: false, username: 'u', password: 'p@ss' },
      { host: 'backup', port: 5671, tls: true, username: undefined, password: undefined },
    ]);
    assert.deepEqual(parseArtemisUrls('artemis://h:1').map((e) => e.port), [1], 'a single URL is a list of one');
  });

  it('refuses an empty list, a bad inner URL and Qpid JMS options, naming option keys and never a password', () => {
    assert.throws(() => parseArtemisUrls('failover:()'), /names no broker/);
    assert.throws(() => parseArtemisUrls('failover:(amqp://u:secret@a:1,redis://b)'), (e: Error) =>
      e instanceof ConfigurationError && /starts with artemis/.test(e.message) && !e.message.includes('secret'));
    assert.throws(() => parseArtemisUrls('failover:(amqp://u:secret@a:1)?failover.maxReconnectAttempts=3&jms.password=hunter2'), (e: Error) =>
      e instanceof ConfigurationError && /failover\.maxReconnectAttempts, jms\.password/.test(e.message)
      && !e.message.includes('secret') && !e.message.includes('hunter2'));
    assert.throws(() => parseArtemisUrl('failover:(amqp://a:1)'), /starts with artemis/, 'the single-broker parser is unchanged');
  });

  it('the transport\'s target masks the credentials of every broker of the list', () => {
    const transport = new ArtemisTransport({ url: 'failover:(amqp://u:one@a:1,amqp://v:two@b:2)', logger: silentLogger });
    assert.equal(transport.target, 'failover:(amqp://u:***@a:1,amqp://v:***@b:2)');
  });
});

describe('Artemis failover list on the lab broker', { skip: artemis.skip }, () => {
  it('a broker that refuses the connection is passed over for the next of the list, and a publish that may not wait does not fail while one takes it', async () => {
    // A port that accepts nothing (listening, then closed): connections to it are refused.
    const closed = await new Promise<number>((resolve) => {
      const server: Server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const lab = new URL(artemis.url!);
    const url = `failover:(amqp://${lab.username}:${lab.password}@127.0.0.1:${closed},${artemis.url!})`;
    const logger = captureLogger();
    const queue = uniqueQueue('bq-art-failover');
    const app = createApp({ transport: new ArtemisTransport({ url, logger, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } }), queue, logger });
    try {
      const id = await app.publish(URN, { n: 1 });
      const seen: string[] = [];
      app.handle(URN, (_data, msg) => void seen.push(msg.id));
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 20_000 }), 1);
      assert.deepEqual(seen, [id]);
      const refused = logger.lines.filter((l) => l.message === 'cannot connect to Artemis; trying the next broker');
      assert.ok(refused.length >= 1, 'the refusing broker was tried first');
      assert.equal(refused[0]!.fields.broker, `amqp://${lab.username}:***@127.0.0.1:${closed}`, 'logged with the password masked');
      assert.ok(!logger.text().includes(`:${lab.password}@`), 'no password in any log line');
    } finally {
      await app.close();
    }
  });
});
