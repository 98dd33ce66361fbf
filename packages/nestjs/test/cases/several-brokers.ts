/**
 * Two brokers in one NestJS application: orders on the lab's Redis (the
 * unnamed module), payments on its RabbitMQ (a module named "payments").
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { Test } from '@nestjs/testing';
import { BabelQueueModule } from '@babelqueue/nestjs';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';
import { until } from '../../../../test/support/until.js';
import { Checkout, Ledger, OrdersHandler, OrdersService, PaymentsCheckout, PaymentsHandler } from './app.js';
import { labUrl } from './lab.js';

const redis = broker('redis');
const rabbitmq = broker('rabbitmq');

describe('BabelQueueModule: Redis and RabbitMQ in one application', { skip: redis.skip || rabbitmq.skip }, () => {
  it('each module consumes its own broker and queue; each client publishes to its own', async () => {
    const ledger = new Ledger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        BabelQueueModule.forRoot({ url: labUrl('redis', redis.url!), queue: uniqueQueue('nest-orders'), logger: silentLogger }),
        BabelQueueModule.forRoot({ name: 'payments', url: rabbitmq.url!, queue: uniqueQueue('nest-payments'), logger: silentLogger }),
      ],
      providers: [{ provide: Ledger, useValue: ledger }, OrdersService, OrdersHandler, PaymentsHandler, Checkout, PaymentsCheckout],
    }).compile();
    await moduleRef.init();
    try {
      const order = await moduleRef.get(Checkout).place(1042);
      await moduleRef.get(PaymentsCheckout).take('p-1042');
      await until(() => ledger.handled.length === 1 && ledger.payments.length === 1, 20_000, 'both handlers');
      assert.equal(ledger.handled[0]!.id, order);
      assert.deepEqual(ledger.payments, ['p-1042']);
      assert.match(moduleRef.get(PaymentsCheckout).payments.app.transport.target, /^amqp/);
    } finally {
      await moduleRef.close();
    }
  });
});
