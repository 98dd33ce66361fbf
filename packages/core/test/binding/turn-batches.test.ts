import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnBatches, type TurnBatchLimits, type Waiting } from '@babelqueue/core/binding';

/** Batches whose sends are recorded (key and items) and resolved at once. */
function recorded(limits: TurnBatchLimits<number> = {}) {
  const sent: [string, number[]][] = [];
  const batches = new TurnBatches<number>(limits, (key, batch: Waiting<number>[]) => {
    sent.push([key, batch.map((w) => w.item)]);
    for (const w of batch) w.resolve();
  });
  return { batches, sent };
}

describe('TurnBatches', () => {
  it('what is added in one run of callbacks leaves as one batch per key, in the order added, once that run is over', async () => {
    const { batches, sent } = recorded();
    const done = Promise.all([batches.add('a', 1), batches.add('b', 2), batches.add('a', 3)]);
    let fourth: Promise<void> | undefined;
    await Promise.resolve().then(() => void (fourth = batches.add('a', 4))); // a continuation of the same run
    assert.deepEqual(sent, [], 'nothing leaves before the run is over');
    await Promise.all([done, fourth]);
    assert.deepEqual(sent, [['a', [1, 3, 4]], ['b', [2]]]);
  });

  it('a lone item is a batch of one, and a later run makes a batch of its own', async () => {
    const { batches, sent } = recorded();
    await batches.add('a', 1);
    await batches.add('a', 2);
    assert.deepEqual(sent, [['a', [1]], ['a', [2]]]);
  });

  it('a batch that reaches maxItems leaves at once; one that would pass maxBytes leaves before the item that would pass it', async () => {
    const { batches, sent } = recorded({ maxItems: 3, maxBytes: 10, bytesOf: (n) => n });
    const done = Promise.all([1, 1, 1, 1].map((n) => batches.add('a', n)));
    assert.deepEqual(sent, [['a', [1, 1, 1]]], 'the third item sent the batch');
    await done;
    const { batches: bySize, sent: sentBySize } = recorded({ maxItems: 3, maxBytes: 10, bytesOf: (n) => n });
    await Promise.all([6, 4, 5].map((n) => bySize.add('a', n)));
    assert.deepEqual(sentBySize, [['a', [6, 4]], ['a', [5]]]);
  });

  it('each caller\'s promise settles as the send settles its item', async () => {
    const batches = new TurnBatches<number>({}, (_key, batch) => {
      for (const w of batch) {
        if (w.item % 2 === 0) w.resolve();
        else w.reject(new Error(`odd ${w.item}`));
      }
    });
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => batches.add('a', n)));
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'fulfilled', 'rejected']);
  });

  it('flush sends every open batch now', () => {
    const { batches, sent } = recorded();
    void batches.add('a', 1);
    void batches.add('b', 2);
    batches.flush();
    assert.deepEqual(sent, [['a', [1]], ['b', [2]]]);
  });

  it('leaves: setImmediate also gathers what separate I/O events of the turn add; nextTick does not', async () => {
    const twoEvents = async (limits: TurnBatchLimits<number>) => {
      const { batches, sent } = recorded(limits);
      const adds: Promise<void>[] = [];
      // Two timers due together run in one timers phase, each its own run of callbacks.
      await new Promise<void>((resolve) => {
        setTimeout(() => adds.push(batches.add('a', 1)), 0);
        setTimeout(() => {
          adds.push(batches.add('a', 2));
          resolve();
        }, 0);
      });
      await Promise.all(adds);
      return sent;
    };
    assert.deepEqual(await twoEvents({ leaves: 'setImmediate' }), [['a', [1, 2]]]);
    assert.deepEqual(await twoEvents({}), [['a', [1]], ['a', [2]]]);
  });
});
