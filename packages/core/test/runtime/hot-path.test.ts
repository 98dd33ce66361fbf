import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { consoleLogger, createApp, HandlerTimeoutError, InMemoryTransport, ShutdownError, type Logger, type Message } from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';

/** Polls `check` until it holds or the deadline passes. */
async function until(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('message.signal is made on first read, with the same meaning', () => {
  test('a handler that reads its signal only after the timeout gets it already aborted with the timeout error', async () => {
    const transport = new InMemoryTransport();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger(), handlerTimeoutMs: 30, maxAttempts: 1 });
    let late: AbortSignal | undefined;
    app.handle(URN, (_data, message) => new Promise<void>((resolve) => {
      setTimeout(() => {
        late = message.signal;
        resolve();
      }, 150);
    }));
    await app.publish(URN, {});
    await app.consume({ idleMs: 100 });
    await until(() => late !== undefined, 'the handler to read its signal');
    assert.equal(late!.aborted, true, 'read after the timeout, the signal is aborted');
    assert.ok(late!.reason instanceof HandlerTimeoutError, 'its reason is the timeout error');
  });

  test('the signal is one object per message, not aborted while the handler runs normally', async () => {
    const transport = new InMemoryTransport();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    const reads: [AbortSignal, AbortSignal][] = [];
    app.handle(URN, (_data, message) => {
      reads.push([message.signal, message.signal]);
    });
    await app.publish(URN, {});
    await app.publish(URN, {});
    assert.equal(await app.consume({ idleMs: 50 }), 2);
    assert.equal(reads.length, 2);
    for (const [first, second] of reads) {
      assert.equal(first, second, 'the same signal on every read');
      assert.equal(first.aborted, false, 'not aborted');
    }
    assert.notEqual(reads[0]![0], reads[1]![0], 'each message has its own signal');
  });
});

describe('the shutdown interrupt, watched once per run', () => {
  test('every handler still running at the deadline is interrupted, including one that reads its signal only afterwards', async () => {
    const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
    const app = createApp({ transport, queue: 'orders', logger: captureLogger(), shutdownTimeoutMs: 100 });
    const running: Message[] = [];
    app.handle(URN, (_data, message) => {
      running.push(message);
      return new Promise(() => undefined); // hangs forever, never reads its signal
    });
    for (let i = 0; i < 3; i++) await app.publish(URN, { i });
    const controller = new AbortController();
    const run = app.run({ signal: controller.signal, concurrency: 3 });
    await until(() => running.length === 3, 'three handlers to start');
    controller.abort();
    await run;
    for (const message of running) {
      assert.equal(message.signal.aborted, true, 'aborted at the deadline');
      assert.ok(message.signal.reason instanceof ShutdownError, 'with the ShutdownError');
    }
    assert.equal(transport.broker.stats('orders').ready, 3, 'all three left for redelivery, none acknowledged');
  });

  test('handlers that return at once under run() and a handler timeout are acknowledged, their signals never aborted', async () => {
    const transport = new InMemoryTransport();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger(), handlerTimeoutMs: 50 });
    const controller = new AbortController();
    const seen: Message[] = [];
    app.handle(URN, (_data, message) => {
      seen.push(message);
      if (seen.length === 2) controller.abort();
    });
    await app.publish(URN, {});
    await app.publish(URN, {});
    await app.run({ signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100)); // past the timeout: a timer left running would abort
    assert.equal(seen.length, 2);
    assert.ok(seen.every((m) => !m.signal.aborted), 'no signal aborted');
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });
});

describe('handler results', () => {
  test('a thenable that is not a Promise is awaited: its rejection is a failure (retry path), its resolution acknowledges', async () => {
    const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
    const app = createApp({ transport, queue: 'orders', logger: captureLogger(), maxAttempts: 2, deadLetter: true });
    const attempts: number[] = [];
    app.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      return {
        then(resolve: () => void, reject: (e: Error) => void) {
          if (message.attempts === 1) reject(new Error('first try fails'));
          else resolve();
        },
      };
    });
    await app.publish(URN, {});
    assert.equal(await app.consume({ maxMessages: 2, idleMs: 10_000 }), 2);
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(transport.messages('orders'), [], 'acknowledged on the second attempt');
    assert.deepEqual(transport.messages('orders.dlq'), [], 'nothing dead-lettered');
  });
});

describe('the per-message debug line', () => {
  test('is written, with its identifiers, to a logger that cannot say which levels are on', async () => {
    const logger = captureLogger();
    const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', logger });
    app.handle(URN, () => undefined);
    const id = await app.publish(URN, {});
    await app.consume({ idleMs: 50 });
    const line = logger.lines.find((l) => l.message === 'handled');
    assert.ok(line, 'a handled line');
    assert.equal(line.level, 'debug');
    assert.equal(line.fields.messageId, id);
    assert.equal(line.fields.queue, 'orders');
    assert.equal(line.fields.attempt, 1);
  });

  test('is not built when the logger says debug is off; other lines still are', async () => {
    const capture = captureLogger();
    const levels: string[] = [];
    const logger: Logger = {
      ...capture,
      isLevelEnabled: (level) => {
        levels.push(level);
        return level !== 'debug';
      },
    };
    const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', logger, maxAttempts: 1 });
    app.handle(URN, () => undefined);
    await app.publish(URN, {});
    await app.publish('urn:babel:orders:unknown', {});
    await app.consume({ idleMs: 50 });
    assert.ok(levels.includes('debug'), 'the logger was asked');
    assert.equal(capture.lines.filter((l) => l.level === 'debug').length, 0, 'no debug line');
    assert.ok(capture.lines.some((l) => l.message.startsWith('dropped')), 'the drop line is still written');
  });

  test('consoleLogger says which levels it writes', () => {
    const info = consoleLogger('info');
    assert.equal(info.isLevelEnabled?.('debug'), false);
    assert.equal(info.isLevelEnabled?.('info'), true);
    assert.equal(info.isLevelEnabled?.('error'), true);
    assert.equal(info.isLevelEnabled?.('trace'), false, 'an unknown level is off');
    assert.equal(consoleLogger('silent').isLevelEnabled?.('error'), false);
    assert.equal(consoleLogger('debug').isLevelEnabled?.('debug'), true);
  });
});
