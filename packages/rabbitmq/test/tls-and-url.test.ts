import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:tls';
import { ConfigurationError, createApp, silentLogger, transportFromUrl as coreTransportFromUrl } from '@babelqueue/core';
import { RabbitMqTransport, transportFromUrl } from '@babelqueue/rabbitmq';
import { Raw, rabbit, uniqueQueue } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';

describe('RabbitMQ over TLS (amqps://) and from a URL', { skip: rabbit.skip }, () => {
  const url = rabbit.url!;
  const broker = new URL(url);
  let dir: string;
  let cert: Buffer;
  let terminator: Server;
  let tlsPort: number;
  let raw: Raw;
  const created: string[] = [];

  before(async () => {
    // A TLS terminator in front of the real broker, with a throwaway certificate
    // for "localhost": the client does a real TLS handshake and verifies it.
    dir = mkdtempSync(join(tmpdir(), 'bq-rmq-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore', timeout: 60_000 });
    cert = readFileSync(join(dir, 'cert.pem'));
    terminator = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (client) => {
      const upstream = netConnect(Number(broker.port || 5672), broker.hostname);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    tlsPort = (terminator.address() as { port: number }).port;
    raw = await Raw.open(url);
  });

  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
    await new Promise<void>((resolve) => terminator.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const amqpsUrl = () => `amqps://${broker.username}:${broker.password}@localhost:${tlsPort}/`;

  it('publishes and consumes over amqps:// with the CA given in the tls option', async () => {
    const queue = uniqueQueue('bq-rmq-tls');
    created.push(queue);
    const app = createApp({ transport: new RabbitMqTransport({ url: amqpsUrl(), tls: { ca: cert }, logger: silentLogger }), queue, logger: silentLogger });
    try {
      const seen: unknown[] = [];
      app.handle(URN, (data) => void seen.push(data));
      await app.publish(URN, { order_id: 5 });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 30_000 }), 1);
      assert.deepEqual(seen, [{ order_id: 5 }]);
    } finally {
      await app.close();
    }
  });

  it('refuses a certificate it cannot verify, with a clear error and no credentials', async () => {
    const transport = new RabbitMqTransport({ url: amqpsUrl(), logger: silentLogger });
    try {
      const check = (error: unknown) => {
        assert.match(String(error), /self.signed|unable to verify|certificate/i);
        assert.doesNotMatch(String(error), new RegExp(`:${broker.password}@`));
        return true;
      };
      await assert.rejects(transport.purge('bq-rmq-tls-unverified'), check);
      // A configuration error is final: a consumer fails instead of retrying forever.
      await assert.rejects(
        transport.consume('bq-rmq-tls-unverified', async () => undefined, { concurrency: 1, signal: new AbortController().signal }),
        check,
      );
    } finally {
      await transport.close();
    }
  });

  it('is what the core registry builds for amqp:// and amqps:// URLs', async () => {
    const fromCore = await coreTransportFromUrl(url);
    const tls = transportFromUrl(new URL(amqpsUrl()), { tls: { ca: cert } });
    try {
      assert.ok(fromCore instanceof RabbitMqTransport, 'fromCore instanceof RabbitMqTransport');
      assert.equal(fromCore.rules.name, 'rabbitmq');
      assert.ok(tls instanceof RabbitMqTransport, 'tls instanceof RabbitMqTransport');
    } finally {
      await fromCore.close();
      await tls.close();
    }
  });

  it('refuses a URL that is not amqp:// or amqps://, without echoing its password', () => {
    assert.throws(() => new RabbitMqTransport({ url: 'http://u:topsecret@h/' }), (error: unknown) => {
      assert.ok(error instanceof ConfigurationError, "error instanceof ConfigurationError");
      assert.doesNotMatch(String(error), /topsecret/);
      return true;
    });
  });
});
