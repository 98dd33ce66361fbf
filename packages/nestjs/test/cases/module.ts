/**
 * BabelQueueModule without a broker (memory://): several queues in one
 * application, injection by class and by name, the drain on close, and the
 * refusals that fail the bootstrap instead of a worker that silently idles.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError, ConnectError, InMemoryTransport, silentLogger, type Message } from '@babelqueue/core';
import { Injectable, type DynamicModule, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BabelQueueClient, BabelQueueModule, OnJob, getBabelQueueClientToken } from '@babelqueue/nestjs';
import { captureLogger } from '../../../../test/support/capture-logger.js';
import { until, within } from '../../../../test/support/until.js';
import { Checkout, Ledger, OrdersHandler, OrdersService, PaymentsCheckout, PaymentsHandler } from './app.js';
import type { OrderCreated } from './catalog.js';

let brokers = 0;
/** A memory:// broker of its own (transports of one process share a broker by name). */
const memory = () => `memory://nest-${process.pid}-${++brokers}`;

async function compile(imports: (DynamicModule | Promise<DynamicModule>)[], providers: Provider[]) {
  return Test.createTestingModule({ imports, providers }).compile();
}

/** A handler that takes a while, to see the shutdown wait for it. */
@Injectable()
class SlowHandler {
  readonly done: string[] = [];
  started: (() => void) | undefined;

  @OnJob('urn:babel:orders:created')
  async created(_data: OrderCreated, message: Message<OrderCreated>): Promise<void> {
    this.started?.();
    await new Promise((resolve) => setTimeout(resolve, 300));
    this.done.push(message.id);
  }
}

@Injectable()
class OrphanHandler {
  @OnJob('urn:babel:orders:created', { name: 'nowhere' })
  created(): void {}
}

describe('BabelQueueModule (memory://)', () => {
  it('runs two queues in one application: each module its own handlers, the default client injected by class, a named one by name', async () => {
    const ledger = new Ledger();
    const moduleRef = await compile([
      BabelQueueModule.forRoot({ url: memory(), queue: 'orders', logger: silentLogger }),
      BabelQueueModule.forRoot({ name: 'payments', url: memory(), queue: 'payments', concurrency: 2, logger: silentLogger }),
    ], [{ provide: Ledger, useValue: ledger }, OrdersService, OrdersHandler, PaymentsHandler, Checkout, PaymentsCheckout]);
    await moduleRef.init();
    try {
      assert.equal(moduleRef.get(BabelQueueClient), moduleRef.get(getBabelQueueClientToken()), 'the default client under its class and its token');
      assert.equal(moduleRef.get(PaymentsCheckout).payments.name, 'payments');
      const order = await moduleRef.get(Checkout).place(1042);
      await moduleRef.get(PaymentsCheckout).take('p-1');
      await until(() => ledger.handled.length === 1 && ledger.payments.length === 1, 10_000, 'both handlers');
      assert.deepEqual(ledger.handled.map((h) => [h.id, h.queue]), [[order, 'orders']]);
      assert.deepEqual(ledger.payments, ['p-1']);
    } finally {
      await moduleRef.close();
    }
  });

  it('close() waits for the handler in flight (within shutdownTimeoutMs), which then acknowledges', async () => {
    const transport = new InMemoryTransport();
    const logger = captureLogger();
    const moduleRef = await compile([BabelQueueModule.forRoot({ transport, queue: 'orders', logger })], [SlowHandler]);
    await moduleRef.init();
    const slow = moduleRef.get(SlowHandler);
    const started = new Promise<void>((resolve) => {
      slow.started = resolve;
    });
    const id = await moduleRef.get(BabelQueueClient).publish('urn:babel:orders:created', { order_id: 1 });
    await within(started, 10_000, 'the handler to start');
    await within(moduleRef.close(), 10_000, 'close');
    assert.deepEqual(slow.done, [id]);
    assert.match(logger.text(), /waiting for in-flight handlers/);
    assert.doesNotMatch(logger.text(), /left unsettled/);
    assert.match(logger.text(), /worker stopped/);
  });

  it('a publish-only module (consume: false) publishes and runs no worker', async () => {
    const url = memory();
    const moduleRef = await compile([BabelQueueModule.forRoot({ url, queue: 'outbound', consume: false, logger: silentLogger })], []);
    await moduleRef.init();
    try {
      const client = moduleRef.get(BabelQueueClient);
      const id = await client.publish('urn:babel:orders:created', { order_id: 3 });
      const seen: string[] = [];
      client.app.handle('urn:babel:orders:created', (_data, message) => void seen.push(message.id));
      await client.app.consume({ idleMs: 200 });
      assert.deepEqual(seen, [id], 'the message waited on the queue: nobody consumed it before');
    } finally {
      await moduleRef.close();
    }
  });

  describe('refusals, at compile or bootstrap', () => {
    const refused = async (imports: (DynamicModule | Promise<DynamicModule>)[], providers: Provider[], pattern: RegExp, kind: new (...args: never[]) => Error = ConfigurationError) => {
      let moduleRef;
      try {
        moduleRef = await compile(imports, providers);
        await moduleRef.init();
      } catch (error) {
        assert.ok(error instanceof kind, `a ${kind.name}, got ${String(error)}`);
        assert.match((error as Error).message, pattern);
        return;
      } finally {
        await moduleRef?.close();
      }
      assert.fail('the application started');
    };

    it('both url and transport, or neither', async () => {
      await refused([BabelQueueModule.forRoot({ url: memory(), transport: new InMemoryTransport() })], [], /needs exactly one of url and transport, got both/);
      await refused([BabelQueueModule.forRoot({})], [], /needs exactly one of url and transport, got neither/);
    });

    it('an unknown App option, with the near name', async () => {
      await refused([BabelQueueModule.forRoot({ url: memory(), maxAttempt: 3 } as never)], [], /BabelQueueModule "default": .*unknown option "maxAttempt" \(did you mean "maxAttempts"\?\)/);
    });

    it('a factory that returns a name', async () => {
      await refused([BabelQueueModule.forRootAsync({ useFactory: () => ({ url: memory(), name: 'x' }) as never })], [], /give name beside useFactory/);
    });

    it('an @OnJob naming a module that is not registered', async () => {
      await refused([BabelQueueModule.forRoot({ url: memory(), logger: silentLogger })], [OrphanHandler],
        /@OnJob\('urn:babel:orders:created', \{ name: 'nowhere' \}\) on OrphanHandler.created: no BabelQueueModule is registered with the name "nowhere"/);
    });

    it('handlers on a publish-only module', async () => {
      await refused([BabelQueueModule.forRoot({ url: memory(), consume: false, logger: silentLogger })], [SlowHandler], /has consume: false, yet 1 @OnJob handler\(s\) name it/);
    });

    it('a worker with no handler at all (every message would fail as an unknown URN): run() refuses it, and so does the bootstrap', async () => {
      await refused([BabelQueueModule.forRoot({ url: memory(), logger: silentLogger })], [], /no handlers are registered/);
    });

    it('a broker that cannot be reached: the bootstrap fails with the ConnectError', async () => {
      await refused([BabelQueueModule.forRoot({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 500, logger: silentLogger })], [SlowHandler], /127\.0\.0\.1:1/, ConnectError);
    });
  });
});
