import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { within } from '../../../test/support/until.js';
import { AzureServiceBusTransport } from '../src/index.js';

describe('clientOptions reach the ServiceBusClient the transport makes', () => {
  // A namespace that takes the connection and never answers: the SDK waits retryOptions.timeoutInMs
  // for it (default 60 s, then 30 s between each of 3 more tries).
  let silent: Server;
  const sockets = new Set<Socket>();
  before(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });

  it("retryOptions: a publish to a namespace that never answers fails after the given 1 s timeout, not the SDK's 60 s", async () => {
    const { port } = silent.address() as { port: number };
    const transport = new AzureServiceBusTransport({
      connectionString: `Endpoint=sb://127.0.0.1:${port};SharedAccessKeyName=k;SharedAccessKey=k;UseDevelopmentEmulator=true`,
      logger: silentLogger,
      clientOptions: { retryOptions: { maxRetries: 0, timeoutInMs: 1_000 } },
    });
    try {
      await assert.rejects(within(transport.publishRaw!('orders', Buffer.from('{}')), 30_000, 'the publish to fail'), (error: Error) => {
        assert.doesNotMatch(error.message, /timed out after .* waiting for the publish to fail/, 'the SDK gave up by itself, on the 1 s timeout');
        return true;
      });
    } finally {
      await transport.close();
    }
  });
});
