import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { consoleLogger, createApp, HandlerTimeoutError, InMemoryTransport, type Logger } from '@babelqueue/core';
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
