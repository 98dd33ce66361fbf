/**
 * BabelQueueModule against a lab broker (Redis or RabbitMQ), in @nestjs/testing
 * applications: options from ConfigService, a handler with an injected
 * service, retry, the DLQ read by a second module, and a shutdown in the middle
 * of a handler that leaves the message to the next application.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { DynamicModule, Provider } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { BabelQueueModule, type BabelQueueOptions } from '@babelqueue/nestjs';
import { broker, uniqueQueue, type BrokerName } from '../../../../test/support/brokers.js';
import { captureLogger } from '../../../../test/support/capture-logger.js';
import { until, within } from '../../../../test/support/until.js';
import { Checkout, DeadLetterReader, Ledger, OrdersHandler, OrdersService } from './app.js';

/** A lab URL as a user would configure it; Redis gives an unsettled reservation back after 2 s (default 60). */
export function labUrl(kind: BrokerName, url: string): string {
  if (kind !== 'redis') return url;
  const u = new URL(url);
  u.searchParams.set('retryAfter', '2');
  return u.href;
}

export function labSuite(kind: 'redis' | 'rabbitmq'): void {
  const lab = broker(kind);

  describe(`BabelQueueModule on ${kind} (@nestjs/testing)`, { skip: lab.skip }, () => {
    const open = new Set<TestingModule>();
    after(async () => {
      for (const m of open) await m.close();
    });

    /** An application on `queue`, its options from ConfigService; `dlq` adds a module reading `<queue>.dlq`. */
    async function start(queue: string, { dlq = false, ledger = new Ledger(), shutdownTimeoutMs = 5_000 } = {}) {
      const logger = captureLogger();
      const url = labUrl(kind, lab.url!);
      const imports: (DynamicModule | Promise<DynamicModule>)[] = [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ BROKER_URL: url, QUEUE: queue, CONCURRENCY: 4, MAX_ATTEMPTS: 2 })] }),
        BabelQueueModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService): BabelQueueOptions => ({
            url: config.getOrThrow<string>('BROKER_URL'),
            queue: config.getOrThrow<string>('QUEUE'),
            concurrency: config.get<number>('CONCURRENCY'),
            maxAttempts: config.get<number>('MAX_ATTEMPTS'),
            deadLetter: true,
            shutdownTimeoutMs,
            logger,
          }),
        }),
      ];
      const providers: Provider[] = [{ provide: Ledger, useValue: ledger }, OrdersService, OrdersHandler, Checkout];
      if (dlq) {
        imports.push(BabelQueueModule.forRoot({ name: 'dlq', url, queue: `${queue}.dlq`, logger: captureLogger() }));
        providers.push(DeadLetterReader);
      }
      const moduleRef = await Test.createTestingModule({ imports, providers }).compile();
      open.add(moduleRef);
      await moduleRef.init();
      return { moduleRef, ledger, logger, checkout: moduleRef.get(Checkout) };
    }

    async function stop(moduleRef: TestingModule): Promise<void> {
      open.delete(moduleRef);
      await within(moduleRef.close(), 30_000, 'the application to close');
    }

    it('runs the @OnJob method of a provider whose service Nest injected, for a message the injected client published', async () => {
      const { moduleRef, ledger, checkout } = await start(uniqueQueue('nest-di'));
      try {
        const id = await checkout.place(1042);
        await until(() => ledger.handled.length === 1, 20_000, 'the handler');
        assert.deepEqual(ledger.handled.map(({ id: got, orderId, attempts }) => ({ got, orderId, attempts })), [{ got: id, orderId: 1042, attempts: 1 }]);
      } finally {
        await stop(moduleRef);
      }
    });

    it('retries a handler that failed: the second attempt succeeds', async () => {
      const { moduleRef, ledger, checkout } = await start(uniqueQueue('nest-retry'));
      try {
        const id = await checkout.place(7, 'once');
        await until(() => ledger.handled.length === 1, 20_000, 'the retry');
        assert.deepEqual(ledger.failures, [{ id, attempts: 1 }]);
        assert.deepEqual(ledger.handled.map((h) => [h.id, h.attempts]), [[id, 2]]);
      } finally {
        await stop(moduleRef);
      }
    });

    it('dead-letters a message that fails maxAttempts times; a second module reads the DLQ', async () => {
      const queue = uniqueQueue('nest-dlq');
      const { moduleRef, ledger, checkout } = await start(queue, { dlq: true });
      try {
        const id = await checkout.place(9, 'always');
        await until(() => ledger.dead.length === 1, 20_000, 'the DLQ record');
        assert.deepEqual(ledger.failures.map((f) => f.attempts), [1, 2]);
        assert.deepEqual(ledger.dead, [{ id, reason: 'failed', attempts: 2 }]);
        assert.equal(ledger.handled.length, 0, 'never acknowledged as handled');
      } finally {
        await stop(moduleRef);
      }
    });

    it('a shutdown in the middle of a handler loses nothing: the message goes to the next application', async () => {
      const queue = uniqueQueue('nest-shutdown');
      const first = new Ledger();
      const hanging = new Promise<void>((resolve) => {
        first.started = resolve;
      });
      const one = await start(queue, { ledger: first, shutdownTimeoutMs: 300 });
      const id = await one.checkout.place(5, 'hang');
      await within(hanging, 20_000, 'the handler to start');
      await stop(one.moduleRef);
      assert.match(one.logger.text(), /1 message\(s\) left unsettled for redelivery/);
      assert.equal(first.handled.length, 0);

      const next = new Ledger();
      next.hangs = false;
      const two = await start(queue, { ledger: next });
      try {
        await until(() => next.handled.length === 1, 30_000, 'the redelivery');
        assert.equal(next.handled[0]!.id, id);
        assert.equal(next.handled[0]!.orderId, 5);
      } finally {
        await stop(two.moduleRef);
      }
    });
  });
}
