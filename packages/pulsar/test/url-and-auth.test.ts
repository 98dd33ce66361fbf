// URL spelling (the Python SDK's pulsar:// form, the derived web service,
// pulsar+ssl:// → https/wss), tokens from the URL or options, and the
// Authorization header actually sent. The lab's Pulsar runs without
// authentication, so the header is checked against a local capture server (a
// stand-in for the web service that records requests; it is not a broker).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { ConfigurationError, ConnectError, silentLogger, transportFromUrl } from '@babelqueue/core';
import { parsePulsarUrl, PulsarTransport, redactUrl } from '@babelqueue/pulsar';
import { PulsarConnection } from '../src/connection.js';
import { resolveOptions } from '../src/options.js';

describe('Pulsar URLs', () => {
  const rows: [string, Record<string, unknown>][] = [
    ['pulsar://broker.example:6650', { web: 'http://broker.example:8080', serviceUrl: 'pulsar://broker.example:6650' }],
    ['pulsar://broker.example', { web: 'http://broker.example:8080', serviceUrl: 'pulsar://broker.example:6650' }],
    ['pulsar+ssl://broker.example:6651', { web: 'https://broker.example:8443', serviceUrl: 'pulsar+ssl://broker.example:6651' }],
    ['pulsar://h:6650?http=18080', { web: 'http://h:18080' }],
    ['pulsar://h:16650?http=18080', { web: 'http://h:18080', serviceUrl: 'pulsar://h:16650' }],
    ['pulsar://h:6650?http=http://admin.example:9090', { web: 'http://admin.example:9090' }],
    ['http://127.0.0.1:8080', { web: 'http://127.0.0.1:8080', serviceUrl: undefined }],
    ['https://pulsar.example/base/', { web: 'https://pulsar.example/base' }],
    ['pulsar://[::1]:6650', { web: 'http://[::1]:8080' }],
    [
      'pulsar://h:6650?token=abc.def&tenant=acme&namespace=orders&subscription=workers&subscriptionType=Key_Shared',
      { token: 'abc.def', tenant: 'acme', namespace: 'orders', subscription: 'workers', subscriptionType: 'Key_Shared' },
    ],
  ];
  for (const [url, expected] of rows) {
    it(url, () => {
      const parsed = parsePulsarUrl(url);
      const got: Record<string, unknown> = { web: parsed.webServiceUrl.href.replace(/\/$/, ''), serviceUrl: parsed.serviceUrl, ...parsed };
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(got[key], value, key);
    });
  }

  for (const [url, message] of [
    ['amqp://h', /starts with pulsar:\/\//],
    ['pulsar://h?colour=blue', /unknown Pulsar URL parameter "colour"/],
    ['pulsar://h?http=ftp://x', /http parameter must be a port or an http\(s\):\/\/ URL/],
    ['pulsar://h?http=70000', /1-65535/],
    ['not a url', /not a valid Pulsar URL/],
    // A port the binding would not use is refused, not silently replaced by 8080.
    ['pulsar://h:6651', /names port 6651, and this binding also needs Pulsar's web service.*\?http=8080/],
    ['pulsar+ssl://h:6650', /names port 6650.*\?http=8443/],
  ] as const) {
    it(`refuses ${url}`, () => assert.throws(() => parsePulsarUrl(url), (e: Error) => e instanceof ConfigurationError && message.test(e.message)));
  }

  it('bad option values are configuration errors', () => {
    const make = (extra: object) => () => new PulsarTransport({ url: 'pulsar://h', logger: silentLogger, ...extra });
    assert.throws(make({ subscriptionType: 'Round_Robin' }), /subscriptionType must be one of/);
    assert.throws(make({ subscription: 'a/b' }), /subscription must be a non-blank name/);
    assert.throws(make({ receiverQueueSize: -1 }), /receiverQueueSize must be an integer from 0 to 1000/);
    assert.throws(make({ receiverQueueSize: 1001 }), /receiverQueueSize/);
    assert.doesNotThrow(make({ receiverQueueSize: 0 }));
    assert.throws(make({ consumerSockets: 0 }), /consumerSockets must be an integer from 1 to 64/);
    assert.throws(make({ consumerCheckMs: 10 }), /consumerCheckMs must be an integer of at least 100/);
    assert.throws(make({ token: ' ' }), /token must be/);
    assert.throws(make({ initialPosition: 'middle' }), /initialPosition/);
  });

  it('the token never shows in the target or a redacted URL', () => {
    const transport = new PulsarTransport({ url: 'pulsar://h:6650?token=s3cret', logger: silentLogger });
    assert.ok(!transport.target.includes('s3cret'), transport.target);
    assert.match(transport.target, /^pulsar:\/\/h:6650\?token=\*\*\* via http:\/\/h:8080 \(subscription babelqueue, Shared\)$/);
    assert.equal(redactUrl('pulsar://user:pw@h?a=1&token=x.y.z&b=2'), 'pulsar://***@h?a=1&token=***&b=2');
  });

  it('pulsar+ssl:// speaks wss:// to the derived https web service', () => {
    const connection = new PulsarConnection(resolveOptions({ url: 'pulsar+ssl://broker.example:6651' }, silentLogger));
    assert.equal(connection.socketUrl('/ws/v2/producer/persistent/public/default/q'), 'wss://broker.example:8443/ws/v2/producer/persistent/public/default/q');
  });

  it('the registry builds a PulsarTransport for pulsar:// and pulsar+ssl://', async () => {
    for (const url of ['pulsar://127.0.0.1:6650', 'pulsar+ssl://127.0.0.1:6651']) {
      const transport = await transportFromUrl(url);
      assert.ok(transport instanceof PulsarTransport, `${url} gives a PulsarTransport`);
      assert.equal(transport.rules.name, 'pulsar');
      await transport.close();
    }
  });
});

describe('Pulsar tokens on the wire (local capture server)', () => {
  let server: Server;
  let port = 0;
  let status = 200;
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      res.writeHead(req.method === 'PUT' ? 204 : status, { 'Content-Type': 'application/json' });
      res.end(status === 401 ? '{"reason":"Authentication required"}' : '[]');
    });
    const sockets = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      sockets.handleUpgrade(req, socket, head, (ws) => {
        ws.on('message', (data) => {
          const frame = JSON.parse(data.toString());
          ws.send(JSON.stringify({ result: 'ok', messageId: 'CAAQADAA', context: frame.context }));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));

  const publishOne = (transport: PulsarTransport) => transport.publish({
    body: Buffer.from('{}'),
    queue: 'q',
    projection: { urn: 'urn:a:b', traceId: 't', messageId: 'm', schemaVersion: 1, lang: 'node', createdAt: 1, attempts: 0 },
  });

  it('a URL token is sent as Authorization: Bearer on the admin API and the WebSocket upgrade', async () => {
    seen.length = 0;
    status = 200;
    const transport = new PulsarTransport({ url: `pulsar://127.0.0.1:6650?http=${port}&token=from.the.url`, logger: silentLogger });
    try {
      await transport.connect({ timeoutMs: 5000 });
      await publishOne(transport);
    } finally {
      await transport.close();
    }
    assert.deepEqual(seen.map((s) => s.path.split('?')[0]), [
      '/admin/v2/namespaces/public',
      '/admin/v2/persistent/public/default/q/subscription/babelqueue',
      '/ws/v2/producer/persistent/public/default/q',
    ]);
    for (const s of seen) assert.equal(s.headers.authorization, 'Bearer from.the.url', s.path);
  });

  it('an option token wins over the URL; a token function is asked for every connection', async () => {
    seen.length = 0;
    status = 200;
    let calls = 0;
    const transport = new PulsarTransport({
      url: `pulsar://127.0.0.1:6650?http=${port}&token=ignored`,
      token: () => `fresh-${++calls}`,
      logger: silentLogger,
    });
    try {
      await transport.connect({ timeoutMs: 5000 });
      await publishOne(transport);
    } finally {
      await transport.close();
    }
    assert.deepEqual(seen.map((s) => s.headers.authorization), ['Bearer fresh-1', 'Bearer fresh-2', 'Bearer fresh-3']);
  });

  it('refused credentials (HTTP 401) fail connect at once with a ConnectError that does not print the token', async () => {
    status = 401;
    const transport = new PulsarTransport({ url: `pulsar://127.0.0.1:6650?http=${port}&token=hunter2`, logger: silentLogger });
    try {
      await assert.rejects(transport.connect({ timeoutMs: 30_000 }), (e: Error) => {
        assert.ok(e instanceof ConnectError, `${e.name}: ${e.message}`);
        assert.match(e.message, /HTTP 401.*Authentication required/);
        assert.ok(!e.message.includes('hunter2'), 'the token is not printed');
        return true;
      });
    } finally {
      await transport.close();
      status = 200;
    }
  });
});
