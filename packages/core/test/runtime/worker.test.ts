import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConfigurationError,
  ConnectError,
  createApp,
  HandlerTimeoutError,
  InMemoryTransport,
  ShutdownError,
  UnrecoverableError,
  type AppOptions,
  type Transport,
} from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';
const json = (body: Buffer) => JSON.parse(body.toString('utf8')) as Record<string, any>;

function setup(options: Partial<AppOptions> = {}) {
  const transport = (options.transport as InMemoryTransport | undefined) ?? new InMemoryTransport();
  const logger = captureLogger();
  const app = createApp({ queue: 'orders', logger, ...options, transport });
  return { app, transport, logger };
}

/** Polls `check` until it holds or the deadline passes (never a fixed sleep that assumes progress). */
async function until(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('handler timeout (handlerTimeoutMs)', () => {
  test('a handler past the timeout has its signal aborted and takes the retry path; the record names the timeout', async () => {
    const { app, transport } = setup({ handlerTimeoutMs: 50, maxAttempts: 2, deadLetter: true });
    const reasons: unknown[] = [];
    app.handle(URN, (_data, message) => new Promise<void>((resolve) => {
      message.signal.addEventListener('abort', () => {
        reasons.push(message.signal.reason);
        resolve();
      });
    }));
    await app.publish(URN, { n: 1 });
    await app.consume({ idleMs: 300 });
    assert.equal(reasons.length, 2, 'both deliveries were aborted');
    assert.ok(reasons.every((r) => r instanceof HandlerTimeoutError), "reasons.every((r) => r instanceof HandlerTimeoutError)");
    const [record] = transport.messages('orders.dlq');
    const dl = json(record!).dead_letter;
    assert.equal(dl.reason, 'failed');
    assert.equal(dl.attempts, 2);
    assert.equal(dl.exception, 'HandlerTimeoutError');
    assert.match(dl.error, /did not finish within 50 ms/);
  });

  test('a handler that ignores its signal no longer settles the message once timed out', async () => {
    const { app, transport } = setup({ handlerTimeoutMs: 30, maxAttempts: 1 });
    let finish!: () => void;
    app.handle(URN, () => new Promise<void>((resolve) => (finish = resolve)));
    await app.publish(URN, {});
    await app.consume({ idleMs: 100 });
    finish();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('a timeout that is not below the reservation is refused before consuming', async () => {
    const transport = new InMemoryTransport({ visibilityTimeoutMs: 1000 });
    const { app } = setup({ transport, handlerTimeoutMs: 1000 });
    app.handle(URN, () => undefined);
    await assert.rejects(app.consume({ idleMs: 10 }), (e: Error) =>
      e instanceof ConfigurationError && /handlerTimeoutMs \(1000\) must be below the memory reservation of 1000 ms/.test(e.message));
    await assert.rejects(app.run({ signal: AbortSignal.abort() }), ConfigurationError);
  });
});

describe('reservations are renewed while a handler runs', () => {
  test('a handler that outlives the lease is never handed to a second consumer while it is alive', async () => {
    // A 1.5 s lease renewed every half second: a lapse needs a one-second timer stall, which
    // a loaded machine does not reach (a 150 ms lease left it 100 ms, which it can).
    const transport = new InMemoryTransport({ visibilityTimeoutMs: 1_500, redeliveryDelayMs: 0 });
    const { app } = setup({ transport });
    let runs = 0;
    app.handle(URN, async () => {
      runs += 1;
      await new Promise((r) => setTimeout(r, 3_500));
    });
    await app.publish(URN, {});
    // maxMessages bounds the run if the lease did lapse (the message would circulate).
    await app.consume({ idleMs: 900, concurrency: 2, maxMessages: 2 });
    assert.equal(runs, 1);
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });
});

describe('UnrecoverableError', () => {
  test('dead-letters on the first attempt, whatever maxAttempts says', async () => {
    const { app, transport } = setup({ maxAttempts: 5, deadLetter: true });
    const seen: number[] = [];
    app.handle(URN, (_d, m) => {
      seen.push(m.attempts);
      throw new UnrecoverableError('negative amount');
    });
    await app.publish(URN, {});
    await app.consume({ idleMs: 100 });
    assert.deepEqual(seen, [1]);
    const dl = json(transport.messages('orders.dlq')[0]!).dead_letter;
    assert.deepEqual([dl.reason, dl.attempts, dl.error, dl.exception], ['failed', 1, 'negative amount', 'UnrecoverableError']);
  });

  test('with dead-lettering off it is dropped at once and logged at ERROR', async () => {
    const { app, transport, logger } = setup({ maxAttempts: 5 });
    app.handle(URN, () => {
      throw new UnrecoverableError('bad input');
    });
    await app.publish(URN, {});
    await app.consume({ idleMs: 100 });
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
    const drop = logger.lines.find((l) => l.message.startsWith('dropped'));
    assert.equal(drop?.level, 'error');
    assert.equal(drop?.fields.attempt, 1);
  });

  test('an error named UnrecoverableError from another copy of the package counts too', async () => {
    const { app, transport } = setup({ deadLetter: true });
    app.handle(URN, () => {
      const error = new Error('foreign');
      error.name = 'UnrecoverableError';
      throw error;
    });
    await app.publish(URN, {});
    await app.consume({ idleMs: 100 });
    assert.equal(json(transport.messages('orders.dlq')[0]!).dead_letter.attempts, 1);
  });
});

describe('error detail', () => {
  test('the stack and the cause chain are logged; the body never is', async () => {
    const { app, logger } = setup({ maxAttempts: 2 });
    app.handle(URN, () => {
      throw new Error('charge failed', { cause: new TypeError('socket hang up', { cause: 'ECONNRESET' }) });
    });
    await app.publish(URN, { secret: 'tok_4242' });
    await app.consume({ idleMs: 100 });
    const retry = logger.lines.find((l) => l.message.includes('retrying'));
    assert.equal(retry?.fields.error, 'Error: charge failed');
    assert.equal(retry?.fields.cause, 'TypeError: socket hang up <- thrown string: ECONNRESET');
    const drop = logger.lines.find((l) => l.message.startsWith('dropped'));
    assert.match(String(drop?.fields.stack), /Error: charge failed\n\s+at /);
    assert.equal(drop?.fields.cause, 'TypeError: socket hang up <- thrown string: ECONNRESET');
    assert.ok(!logger.text().includes('tok_4242'), "!logger.text().includes('tok_4242')");
  });

  for (const deadLetter of [true, false]) {
    test(`a retry logs one line without the stack; the stack is logged once per message, at the ${deadLetter ? 'dead-letter' : 'drop'}`, async () => {
      const { app, logger } = setup({ maxAttempts: 3, deadLetter });
      app.handle(URN, () => {
        throw new Error('card declined');
      });
      for (let i = 0; i < 5; i += 1) await app.publish(URN, { order_id: i });
      await app.consume({ idleMs: 100 });
      const retries = logger.lines.filter((l) => l.message.includes('retrying'));
      assert.equal(retries.length, 10);
      for (const line of retries) {
        assert.equal(line.fields.error, 'Error: card declined');
        assert.equal(line.fields.stack, undefined, 'no stack on a retry line');
      }
      const withStack = logger.lines.filter((l) => l.fields.stack !== undefined);
      assert.equal(withStack.length, 5, 'one stack per message');
      for (const line of withStack) assert.equal(line.message, deadLetter ? 'dead-lettering' : 'dropped: the message is gone (turn on deadLetter to keep such messages)');
    });
  }

  const thrown: [string, unknown, string, string][] = [
    ['an object', { code: 42, why: 'nope' }, '{"code":42,"why":"nope"}', 'thrown object: {"code":42,"why":"nope"}'],
    ['a string', 'plain text', 'plain text', 'thrown string: plain text'],
    ['null', null, 'null', 'thrown null: null'],
    ['undefined', undefined, 'undefined', 'thrown undefined: undefined'],
  ];
  for (const [what, value, recordError, logError] of thrown) {
    test(`a thrown ${what} is described the same way in the log and in the DLQ record`, async () => {
      const { app, transport, logger } = setup({ maxAttempts: 1, deadLetter: true });
      app.handle(URN, () => {
        throw value;
      });
      await app.publish(URN, {});
      await app.consume({ idleMs: 100 });
      const dl = json(transport.messages('orders.dlq')[0]!).dead_letter;
      assert.equal(dl.error, recordError);
      assert.equal(dl.exception, null);
      assert.equal(logger.lines.find((l) => l.message === 'dead-lettering')?.fields.error, logError);
    });
  }
});

describe('run(): honest start-up and a shutdown with a deadline', () => {
  test('connects first, then says "consuming <queue> on <target>"; warns once that dead-lettering is off', async () => {
    const { app, logger } = setup();
    app.handle(URN, () => undefined);
    const controller = new AbortController();
    const running = app.run({ signal: controller.signal });
    await until(() => logger.lines.some((l) => l.message === 'consuming orders on memory://'), 'the start-up line');
    controller.abort();
    await running;
    const off = logger.lines.filter((l) => l.message.startsWith('dead-lettering is off'));
    assert.equal(off.length, 1);
    assert.equal(off[0]?.level, 'warn');
    assert.match(off[0]!.message, /dropped \(logged at ERROR\); pass deadLetter: true to keep such messages in orders\.dlq/);
  });

  test('a broker that cannot be reached rejects run() with a ConnectError, closes the transport and never says "consuming"', async () => {
    let closed = false;
    const memory = new InMemoryTransport();
    const transport: Transport = Object.assign(Object.create(memory) as InMemoryTransport, {
      target: 'fake://u:***@10.0.0.1:1',
      connect: async () => {
        throw new ConnectError('fake://u:***@10.0.0.1:1', 'WRONGPASS invalid username-password pair');
      },
      close: async () => {
        closed = true;
      },
    });
    const { app, logger } = setup({ transport });
    app.handle(URN, () => undefined);
    await assert.rejects(app.run(), (e: Error) =>
      e instanceof ConnectError && e.message === 'cannot connect to fake://u:***@10.0.0.1:1: WRONGPASS invalid username-password pair');
    assert.equal(closed, true);
    assert.ok(!logger.lines.some((l) => l.message.startsWith('consuming')), "!logger.lines.some((l) => l.message.startsWith('consuming'))");
  });

  test('a handler that never returns is interrupted at the shutdown deadline; its message is left for redelivery, never acked', async () => {
    const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
    const { app, logger } = setup({ transport, shutdownTimeoutMs: 100 });
    let signal: AbortSignal | undefined;
    app.handle(URN, (_d, m) => {
      signal = m.signal;
      return new Promise(() => undefined); // hangs forever
    });
    await app.publish(URN, {});
    const controller = new AbortController();
    const running = app.run({ signal: controller.signal });
    await until(() => signal !== undefined, 'the handler to start');
    controller.abort();
    await running;
    assert.ok(signal?.aborted, "signal?.aborted");
    assert.ok(signal?.reason instanceof ShutdownError, "signal?.reason instanceof ShutdownError");
    assert.equal(transport.broker.stats('orders').ready, 1, 'back on the queue, not acknowledged');
    const left = logger.lines.find((l) => l.message.startsWith('shutdown deadline passed'));
    assert.equal(left?.fields.left, 1);
    assert.match(left!.message, /1 message\(s\) left unsettled for redelivery/);
  });

  test('a handler that finishes within the deadline is acknowledged during shutdown', async () => {
    const { app, transport } = setup({ shutdownTimeoutMs: 5_000 });
    let started = false;
    app.handle(URN, async () => {
      started = true;
      await new Promise((r) => setTimeout(r, 150));
    });
    await app.publish(URN, {});
    const controller = new AbortController();
    const running = app.run({ signal: controller.signal });
    await until(() => started, 'the handler to start');
    controller.abort();
    await running;
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('an already aborted signal returns without consuming', async () => {
    const { app, transport } = setup();
    app.handle(URN, () => assert.fail('must not run'));
    await app.publish(URN, {});
    await app.run({ signal: AbortSignal.abort() });
    assert.equal(transport.broker.stats('orders').ready, 1);
  });

  test('a retry backoff the transport cannot apply, and a transport with no retry path, are warned about once', async () => {
    const transport = new InMemoryTransport();
    Object.assign(transport, {
      rules: { ...transport.rules, name: 'redis-legacy', delayAdvice: "use layout: 'zset' for delayed retries", retryPathAdvice: 'configure retry tiers' },
      capabilities: { delayedPublish: false, delayedRetry: false, retry: false, headers: true },
    });
    const { app, logger } = setup({ transport, retryBackoff: { baseMs: 500 } });
    app.handle(URN, () => undefined);
    await app.consume({ idleMs: 10 });
    await app.consume({ idleMs: 10 });
    const ignored = logger.lines.filter((l) => l.message.startsWith('retryBackoff is ignored'));
    assert.equal(ignored.length, 1);
    assert.match(ignored[0]!.message, /use layout: 'zset'/);
    const noPath = logger.lines.filter((l) => l.message.includes('no retry path'));
    assert.equal(noPath.length, 1);
    assert.match(noPath[0]!.message, /until it succeeds; configure retry tiers$/);
  });
});

describe('plain-JavaScript mistakes are caught at createApp / run', () => {
  test('an unknown option key is refused, naming the closest known one', () => {
    assert.throws(() => createApp({ transport: new InMemoryTransport(), queu: 'orders' } as never), (e: Error) =>
      e instanceof ConfigurationError && /unknown option "queu" \(did you mean "queue"\?\)/.test(e.message));
    assert.throws(() => createApp({ transport: new InMemoryTransport(), deadLetter: { sufix: '.x' } } as never), /unknown option "sufix"/);
    assert.throws(() => createApp({ transport: new InMemoryTransport(), retryBackoff: { base: 1 } } as never), /unknown option "base"/);
  });

  test('unknown keys of run, consume and publish options are refused too', async () => {
    const { app } = setup();
    app.handle(URN, () => undefined);
    await assert.rejects(app.run({ concurency: 4 } as never), /unknown option "concurency" \(did you mean "concurrency"\?\)/);
    await assert.rejects(app.consume({ idle: 5 } as never), /unknown option "idle"/);
    await assert.rejects(app.publish(URN, {}, { delay: 5 } as never), /unknown option "delay"/);
  });

  test('a non-string queue, a missing transport and a non-function handler are refused', () => {
    assert.throws(() => createApp({ transport: new InMemoryTransport(), queue: 42 } as never), /queue must be a non-blank string, got number/);
    assert.throws(() => createApp({ queue: 'orders' } as never), /needs a transport/);
    const { app } = setup();
    assert.throws(() => app.handle(URN, 'nope' as never), /must be a function/);
  });

  test('run() with no handlers is refused under fail/release (every message would fail); consume() only warns', async () => {
    const { app, logger } = setup();
    await assert.rejects(app.run({ signal: AbortSignal.abort() }), /no handlers are registered/);
    await app.consume({ idleMs: 10 });
    assert.ok(logger.lines.some((l) => l.level === 'warn' && l.message.startsWith('no handlers are registered')), "logger.lines.some((l) => l.level === 'warn' && l.message.startsWith('no handlers are registered'))");
  });
});

describe('a dead-letter queue that is its own source queue is refused', () => {
  test('an empty suffix', () => {
    assert.throws(() => createApp({ transport: new InMemoryTransport(), deadLetter: { suffix: '' } }), /empty suffix makes every queue its own dead-letter queue/);
  });

  test('an explicit DLQ equal to the App queue fails at createApp', () => {
    assert.throws(() => createApp({ transport: new InMemoryTransport(), queue: 'orders', deadLetter: { queue: 'orders' } }),
      (e: Error) => e instanceof ConfigurationError && /dead-letter queue of "orders" is "orders" itself/.test(e.message));
  });

  test('an explicit DLQ equal to the consumed queue fails when consuming starts, before anything is taken', async () => {
    const { app, transport } = setup({ deadLetter: { queue: 'triage' } });
    app.handle(URN, () => undefined);
    await app.publish(URN, {}, { queue: 'triage' });
    await assert.rejects(app.consume({ queue: 'triage', idleMs: 10 }), /"triage" itself/);
    await assert.rejects(app.run({ queue: 'triage' }), /"triage" itself/);
    assert.equal(transport.broker.stats('triage').ready, 1);
  });
});
