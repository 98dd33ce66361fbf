// Which receive errors end the consume loop. The stand-in accepts any credential
// and creates any queue on first use, so the fatal answers (refused credentials,
// an entity that does not exist) are injected with a fake receiver here; the
// transient path against a real cut is in reconnect.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceBusError, type ServiceBusReceiver } from '@azure/service-bus';
import { consumeLoop } from '../src/consume-loop.js';
import { captureLogger } from './support/lab.js';

/** A receiver whose receives fail with `errors` in turn, then find nothing. */
function failingReceiver(errors: Error[]): ServiceBusReceiver & { calls: number } {
  const fake = {
    calls: 0,
    isClosed: false,
    receiveMessages: async () => {
      const error = errors[fake.calls++];
      if (error !== undefined) throw error;
      // As the SDK does, an empty receive waits (a little) instead of answering at once.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return [];
    },
    close: async () => {
      fake.isClosed = true;
    },
  };
  return fake as unknown as ServiceBusReceiver & { calls: number };
}

function run(receiver: ServiceBusReceiver, maxCalls: number) {
  const logger = captureLogger();
  const stop = new AbortController();
  const loop = consumeLoop({
    openReceiver: () => receiver,
    toDelivery: () => assert.fail('no message is received'),
    queue: 'orders',
    logger,
    receiveWaitMs: 10,
  }, async () => undefined, { concurrency: 1, signal: stop.signal, idleMs: 5_000 });
  const watch = setInterval(() => {
    if ((receiver as unknown as { calls: number }).calls >= maxCalls) stop.abort();
  }, 5);
  return { logger, done: loop.finally(() => clearInterval(watch)) };
}

describe('Service Bus receive errors', () => {
  for (const code of ['UnauthorizedAccess', 'MessagingEntityNotFound', 'MessagingEntityDisabled']) {
    it(`ends the consume loop with the SDK's error on a fatal receive error (${code})`, async () => {
      const receiver = failingReceiver([new ServiceBusError(`refused (${code})`, code as ServiceBusError['code'])]);
      const { done } = run(receiver, 10);
      await assert.rejects(done, (error: unknown) => error instanceof ServiceBusError && error.code === code, 'the loop ends with that error');
      assert.equal(receiver.calls, 1, 'no receive after a fatal error');
      assert.ok(receiver.isClosed, 'the receiver is closed');
    });
  }

  const transient: Array<[string, Error]> = [
    ['a link detached by a cut (plain Error)', new Error('Unknown error occurred on the AMQP connection while receiving messages.')],
    ['a socket error (GeneralError: ECONNABORTED)', new ServiceBusError('ECONNABORTED', 'GeneralError')],
    ['a timeout (ServiceTimeout)', new ServiceBusError('timed out', 'ServiceTimeout')],
    ['a busy namespace (ServiceBusy)', new ServiceBusError('busy', 'ServiceBusy')],
  ];
  for (const [what, error] of transient) {
    it(`keeps receiving after a transient receive error: ${what}, logged at WARN`, async () => {
      const receiver = failingReceiver([error]);
      const { logger, done } = run(receiver, 2);
      await done;
      assert.ok(receiver.calls >= 2, 'the loop received again');
      const warns = logger.lines.filter((line) => line.level === 'warn');
      assert.equal(warns.length, 1, `one WARN line:\n${logger.text()}`);
      assert.ok(String(warns[0]!.fields.error).includes(error.message), 'the WARN line names the error');
    });
  }
});
