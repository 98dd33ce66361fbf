import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:tls';
import rhea from 'rhea';
import { ConfigurationError, ConnectError, createApp, silentLogger, transportFromUrl as coreTransportFromUrl } from '@babelqueue/core';
import { ArtemisTransport, parseArtemisUrl, transportFromUrl } from '@babelqueue/artemis';
import { artemis, artemisUrl, Raw, uniqueQueue } from './support/artemis.js';

const URN = 'urn:babel:orders:created';

describe('Artemis URLs', () => {
  for (const [url, expected] of [
    ['artemis://admin:s3cret@broker:61617', { host: 'broker', port: 61617, tls: false, username: 'admin', password: 's3cret' }],
    ['artemis://broker', { host: 'broker', port: 5672, tls: false }],
    ['artemis+ssl://u%40corp:p%2Fw@broker', { host: 'broker', port: 5671, tls: true, username: 'u@corp', password: 'p/w' }],
    ['amqp://127.0.0.1:5673', { host: '127.0.0.1', port: 5673, tls: false }],
    ['amqps://[::1]:5671', { host: '::1', port: 5671, tls: true }],
  ] as const) {
    it(`${url}`, () => assert.deepEqual(parseArtemisUrl(url), expected));
  }

  it('refuses another scheme or no host with a ConfigurationError that never echoes the password', () => {
    for (const url of ['http://u:topsecret@h/', 'artemis://u:topsecret@', 'nonsense topsecret']) {
      assert.throws(() => new ArtemisTransport({ url }), (error: unknown) => {
        assert.ok(error instanceof ConfigurationError, String(error));
        assert.doesNotMatch(String(error), /topsecret/);
        return true;
      });
    }
  });

  it('is what the core registry builds for artemis:// and artemis+ssl://, with the password masked in target', async () => {
    for (const url of ['artemis://admin:hunter2@127.0.0.1:1', 'artemis+ssl://admin:hunter2@127.0.0.1:1']) {
      const transport = await coreTransportFromUrl(url);
      assert.ok(transport instanceof ArtemisTransport, url);
      assert.equal(transport.rules.name, 'artemis');
      assert.doesNotMatch(transport.target, /hunter2/);
      await transport.close();
    }
    const direct = transportFromUrl(new URL('artemis://127.0.0.1:1'));
    assert.ok(direct instanceof ArtemisTransport, 'transportFromUrl builds an ArtemisTransport');
    await direct.close();
  });

  it('refused SASL PLAIN credentials fail connect at once, without retrying (an AMQP peer that refuses every login)', async () => {
    // The lab's Artemis allows anonymous: its guest login takes any failed login,
    // so the refusal comes from an AMQP 1.0 peer (rhea as a server) that refuses it.
    const container = rhea.create_container({ id: 'refusing-peer' });
    container.sasl_server_mechanisms.enable_plain(() => false);
    const server = container.listen({ port: 0, host: '127.0.0.1' }) as unknown as NetServer;
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    const transport = new ArtemisTransport({ url: `artemis://admin:hunter2@127.0.0.1:${port}`, logger: silentLogger });
    try {
      await assert.rejects(transport.connect({ timeoutMs: 20_000 }), (e: Error) => {
        assert.ok(e instanceof ConnectError, `${e.name}: ${e.message}`);
        assert.match(e.message, /unauthori[sz]ed|authenticat/i);
        assert.doesNotMatch(e.message, /hunter2/);
        assert.doesNotMatch(e.message, /no answer within/, 'refused at once, not at the deadline');
        return true;
      });
      await assert.rejects(transport.publish({ body: Buffer.from('{}'), queue: 'q', projection: {} as never }), /unauthori[sz]ed|authenticat/i);
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('Artemis over TLS (artemis+ssl://)', { skip: artemis.skip }, () => {
  const broker = new URL(artemis.url ?? 'amqp://x');
  let dir: string;
  let cert: Buffer;
  let terminator: Server;
  let tlsPort: number;
  let raw: Raw;
  const created: string[] = [];

  before(async () => {
    // A TLS terminator in front of the lab broker, with a throwaway certificate
    // for "localhost": the client does a real handshake and verifies it.
    dir = mkdtempSync(join(tmpdir(), 'bq-art-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    cert = readFileSync(join(dir, 'cert.pem'));
    terminator = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (client) => {
      const upstream = netConnect(Number(broker.port), broker.hostname);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    tlsPort = (terminator.address() as AddressInfo).port;
    raw = await Raw.open();
  });

  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
    await new Promise<void>((resolve) => terminator.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const tlsUrl = () => artemisUrl().replace(/^artemis:\/\/([^@]*)@[^/]*/, `artemis+ssl://$1@localhost:${tlsPort}`);

  it('publishes and consumes with SASL PLAIN over TLS, the CA given in the tls option', async () => {
    const queue = uniqueQueue('bq-art-tls');
    created.push(queue);
    const app = createApp({ transport: new ArtemisTransport({ url: tlsUrl(), tls: { ca: cert }, logger: silentLogger }), queue, logger: silentLogger });
    const seen: unknown[] = [];
    app.handle(URN, (data) => void seen.push(data));
    await app.publish(URN, { order_id: 5 });
    assert.equal(await app.consume({ maxMessages: 1, idleMs: 5000 }), 1);
    await app.close();
    assert.deepEqual(seen, [{ order_id: 5 }]);
  });

  it('refuses a certificate it cannot verify at once, with a clear error and no credentials', async () => {
    const transport = new ArtemisTransport({ url: tlsUrl(), logger: silentLogger });
    try {
      await assert.rejects(transport.connect({ timeoutMs: 20_000 }), (error: Error) => {
        assert.match(String(error), /self.signed|unable to verify|certificate/i);
        assert.doesNotMatch(String(error), /no answer within/);
        assert.doesNotMatch(String(error), new RegExp(`:${broker.password}@`));
        return true;
      });
    } finally {
      await transport.close();
    }
  });
});
