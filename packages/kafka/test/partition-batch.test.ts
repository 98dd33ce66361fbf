import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { processPartitionBatch, type BatchPolicy, type Ordering, type PartitionBatch, type RecordResult } from '../src/partition-batch.js';
import { Slots } from '../src/slots.js';
import { until } from '../../../test/support/until.js';

interface Rec { offset: string; key?: Buffer | null }

/** A recording fake of the kafkajs batch seam: a commit records the resolved offset at that time. */
function fakeBatch(records: Rec[] | number[], opts: { heartbeat?: () => Promise<void>; mayTake?: () => boolean } = {}) {
  const log: string[] = [];
  let resolved: string | undefined;
  const committed: (string | undefined)[] = [];
  const batch: PartitionBatch<Rec> = {
    records: records.map((r) => (typeof r === 'number' ? { offset: String(r) } : r)),
    resolveOffset: (offset) => {
      resolved = String(Number(offset) + 1);
      log.push(`resolve ${offset}`);
    },
    commit: async () => {
      committed.push(resolved);
      log.push(`commit ${resolved}`);
    },
    heartbeat: opts.heartbeat ?? (async () => undefined),
    pauseFor: (ms) => log.push(`pause ${ms}`),
    mayTake: opts.mayTake ?? (() => true),
  };
  return { batch, log, committed };
}

function policy(over: Partial<BatchPolicy> & { ordering?: Ordering; slots?: Slots } = {}): BatchPolicy {
  return { commitIntervalMs: 60_000, ordering: 'partition', slots: new Slots(4), settledAhead: new Set(), heartbeatEveryMs: 60_000, ...over };
}

const settled: RecordResult = { kind: 'settled' };
const hold = (ms: number): RecordResult => ({ kind: 'hold', resumeInMs: ms });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
const key = (s: string | null) => (s === null ? null : Buffer.from(s));

/** Tracks how many handlers run at once, overall and per label. */
function overlap() {
  const active = new Map<string, number>();
  let total = 0;
  const max = { total: 0, per: new Map<string, number>() };
  return {
    max,
    async run(label: string, ms: number) {
      total += 1;
      active.set(label, (active.get(label) ?? 0) + 1);
      max.total = Math.max(max.total, total);
      max.per.set(label, Math.max(max.per.get(label) ?? 0, active.get(label)!));
      await sleep(ms);
      total -= 1;
      active.set(label, active.get(label)! - 1);
    },
  };
}

describe('process-then-commit over a partition batch', () => {
  it('partition ordering: one record at a time in offset order (even with free slots), commit = last offset + 1, one resolve per commit', async () => {
    const { batch, log, committed } = fakeBatch([10, 11, 12]);
    const o = overlap();
    await processPartitionBatch(batch, async (r) => {
      log.push(`handle ${r.offset}`);
      await o.run('p', 2);
      return settled;
    }, policy({ slots: new Slots(8) }));
    assert.equal(o.max.total, 1);
    assert.deepEqual(log, ['handle 10', 'handle 11', 'handle 12', 'resolve 12', 'commit 13']);
    assert.deepEqual(committed, ['13']);
  });

  it('partition ordering: a held record pauses the partition; nothing at or after it is handled or committed', async () => {
    const { batch, log, committed } = fakeBatch([5, 6, 7, 8]);
    const handled: string[] = [];
    await processPartitionBatch(batch, async (r) => {
      handled.push(r.offset);
      return r.offset === '7' ? hold(250) : settled;
    }, policy());
    assert.deepEqual(handled, ['5', '6', '7']);
    assert.deepEqual(log, ['pause 250', 'resolve 6', 'commit 7']);
    assert.deepEqual(committed, ['7']);
  });

  it('commits nothing when the first record is held', async () => {
    const { batch, log } = fakeBatch([3, 4]);
    await processPartitionBatch(batch, async () => hold(10), policy({ commitIntervalMs: 0 }));
    assert.deepEqual(log, ['pause 10']);
  });

  it('commits inside a long batch once the interval has passed', async () => {
    let clock = 0;
    const { batch, committed } = fakeBatch([0, 1, 2, 3]);
    await processPartitionBatch(batch, async () => {
      clock += 600;
      return settled;
    }, policy({ commitIntervalMs: 1000, now: () => clock }));
    assert.deepEqual(committed, ['2', '4']);
  });

  it('stops taking records when told (stop, seek, drain limit) and commits what settled', async () => {
    let taken = 0;
    const { batch, log } = fakeBatch([0, 1, 2], { mayTake: () => taken < 2 });
    await processPartitionBatch(batch, async () => {
      taken += 1;
      return settled;
    }, policy());
    assert.deepEqual(log, ['resolve 1', 'commit 2']);
  });

  it('on a rebalance seen by the heartbeat: starts nothing more, commits the settled prefix, rethrows so kafkajs rejoins', async () => {
    const rebalance = Object.assign(new Error('The group is rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
    let beats = 0;
    const { batch, log } = fakeBatch([0, 1, 2], {
      heartbeat: async () => {
        beats += 1;
        if (beats === 2) throw rebalance;
      },
    });
    // A clock one second on at each read: every record asks for a heartbeat (a tenth of the 10 s interval).
    let clock = 0;
    const now = () => (clock += 1000);
    await assert.rejects(processPartitionBatch(batch, async () => settled, policy({ heartbeatEveryMs: 10_000, now })), rebalance);
    assert.deepEqual(log, ['resolve 1', 'commit 2']);
  });

  it('asks for a heartbeat between records at most every tenth of the heartbeat interval', async () => {
    let beats = 0;
    let clock = 0;
    const { batch } = fakeBatch([0, 1, 2, 3, 4, 5], {
      heartbeat: async () => {
        beats += 1;
      },
    });
    // Each record moves the clock 400 ms: with a 10 s interval, a heartbeat is asked for once 1 s has passed.
    await processPartitionBatch(batch, async () => {
      clock += 400;
      return settled;
    }, policy({ heartbeatEveryMs: 10_000, now: () => clock }));
    assert.equal(beats, 2, 'at 1,200 ms and 2,400 ms');
  });

  it('heartbeats while a slow handler runs; a rebalance then stops new starts but lets the handler finish and commit', async () => {
    const rebalance = new Error('rebalancing');
    let beats = 0;
    const { batch, log } = fakeBatch([0, 1], {
      heartbeat: async () => {
        beats += 1;
        throw rebalance;
      },
    });
    const handled: string[] = [];
    let beatsDuringHandler = 0;
    await assert.rejects(processPartitionBatch(batch, async (r) => {
      handled.push(r.offset);
      // Slow until the background heartbeat has run (however late a busy machine fires timers).
      await until(() => beats >= 1, 10_000, 'a background heartbeat', 5);
      beatsDuringHandler = beats;
      return settled;
    }, policy({ heartbeatEveryMs: 10 })), rebalance);
    assert.ok(beatsDuringHandler >= 1, 'the background heartbeat ran during the slow handler');
    assert.deepEqual(handled, ['0']);
    assert.deepEqual(log, ['resolve 0', 'commit 1']);
  });

  it('no ordering: records run in parallel up to the slots, settle out of order, and every commit covers only a settled prefix', async () => {
    const { batch, committed } = fakeBatch([0, 1, 2, 3, 4]);
    const gate = [0, 1, 2, 3, 4].map(() => deferred());
    const began = [0, 1, 2, 3, 4].map(() => deferred());
    const done = new Set<number>();
    const order: number[] = [];
    const covered: boolean[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const commit = batch.commit.bind(batch);
    batch.commit = async () => {
      await commit();
      // The offset committed is the next to read: every record below it settled.
      const upTo = Number(committed[committed.length - 1]);
      covered.push(Array.from({ length: upTo }, (_, k) => done.has(k)).every(Boolean));
    };
    const running = processPartitionBatch(batch, async (r) => {
      const i = Number(r.offset);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      began[i]!.resolve();
      await gate[i]!.promise;
      inFlight -= 1;
      done.add(i);
      order.push(i);
      return settled;
    }, policy({ ordering: 'none', slots: new Slots(3), commitIntervalMs: 0 }));
    // Records 0-2 hold the three slots; they finish in the order 2, 0, then 3 and 4 (started in the freed slots), then 1.
    await Promise.all(began.slice(0, 3).map((b) => b.promise));
    gate[2]!.resolve();
    await began[3]!.promise;
    gate[0]!.resolve();
    gate[3]!.resolve();
    await began[4]!.promise;
    gate[4]!.resolve();
    gate[1]!.resolve();
    await running;
    assert.equal(maxInFlight, 3, 'at most the slots in flight');
    assert.deepEqual(order, [2, 0, 3, 4, 1], 'settled out of order');
    assert.deepEqual(committed, ['1', '5'], 'after 0: up to 1 (1 still running); after 1: all');
    assert.deepEqual(covered, [true, true], 'no commit passed an unsettled record');
  });

  it('no ordering: records settled past a held one are remembered and skipped, not handled again, after the refetch', async () => {
    const ahead = new Set<string>();
    const first = fakeBatch([0, 1, 2]);
    await processPartitionBatch(first.batch, async (r) => (r.offset === '1' ? hold(100) : settled), policy({ ordering: 'none', settledAhead: ahead }));
    assert.deepEqual(first.committed, ['1'], 'the commit stops before the held record');
    assert.deepEqual([...ahead], ['2']);
    assert.ok(first.log.includes('pause 100'), "first.log.includes('pause 100')");

    const again = fakeBatch([1, 2, 3]);
    const handled: string[] = [];
    await processPartitionBatch(again.batch, async (r) => {
      handled.push(r.offset);
      return settled;
    }, policy({ ordering: 'none', settledAhead: ahead }));
    assert.deepEqual(handled.sort(), ['1', '3'], 'offset 2 already settled: skipped');
    assert.deepEqual(again.committed, ['4']);
    assert.equal(ahead.size, 0);
  });

  it('key ordering: the same key one at a time in offset order, other keys and null keys in parallel', async () => {
    const records = [
      { offset: '0', key: key('a') }, { offset: '1', key: key('b') }, { offset: '2', key: key('a') },
      { offset: '3', key: null }, { offset: '4', key: null }, { offset: '5', key: key('a') },
    ];
    const { batch, committed } = fakeBatch(records);
    const o = overlap();
    const order: string[] = [];
    await processPartitionBatch(batch, async (r) => {
      const label = r.key === null || r.key === undefined ? `null-${r.offset}` : r.key.toString();
      await o.run(label, 10);
      order.push(`${label}${r.offset}`);
      return settled;
    }, policy({ ordering: 'key', slots: new Slots(8) }));
    assert.equal(o.max.per.get('a'), 1, 'key a never overlaps itself');
    assert.ok(o.max.total >= 3, 'different keys ran together');
    assert.deepEqual(order.filter((x) => x.startsWith('a')), ['a0', 'a2', 'a5']);
    assert.deepEqual(committed, ['6']);
  });

  it('key ordering: a held record holds back the later records of its key only', async () => {
    const ahead = new Set<string>();
    const records = [{ offset: '0', key: key('a') }, { offset: '1', key: key('b') }, { offset: '2', key: key('a') }];
    const { batch, committed } = fakeBatch(records);
    const handled: string[] = [];
    await processPartitionBatch(batch, async (r) => {
      handled.push(r.offset);
      return r.offset === '0' ? hold(50) : settled;
    }, policy({ ordering: 'key', settledAhead: ahead }));
    assert.deepEqual(handled.sort(), ['0', '1']);
    assert.deepEqual(committed, [], 'nothing committable: offset 0 is held');
    assert.deepEqual([...ahead], ['1']);
  });

  it('shares the slots between the partitions of one consume loop', async () => {
    const slots = new Slots(2);
    const o = overlap();
    const handler = async () => {
      await o.run('all', 10);
      return settled;
    };
    await Promise.all([
      processPartitionBatch(fakeBatch([0, 1, 2]).batch, handler, policy({ ordering: 'none', slots })),
      processPartitionBatch(fakeBatch([0, 1, 2]).batch, handler, policy({ ordering: 'none', slots })),
    ]);
    assert.equal(o.max.total, 2);
  });
});

describe('Slots', () => {
  it('serves waiters in arrival order', async () => {
    const slots = new Slots(1);
    const order: number[] = [];
    await slots.acquire();
    const waiters = [1, 2, 3].map((n) => slots.acquire().then(() => {
      order.push(n);
      slots.release();
    }));
    slots.release();
    await Promise.all(waiters);
    assert.deepEqual(order, [1, 2, 3]);
  });
});
