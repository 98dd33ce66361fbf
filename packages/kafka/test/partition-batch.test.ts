import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { processPartitionBatch, type PartitionBatch, type RecordResult } from '../src/partition-batch.js';

interface Rec { offset: string }

/** A recording fake of the kafkajs batch seam: committed = the resolved offset at commit time. */
function fakeBatch(offsets: number[], opts: { heartbeat?: () => Promise<void>; mayTake?: () => boolean } = {}) {
  const log: string[] = [];
  let resolved: string | undefined;
  const committed: (string | undefined)[] = [];
  const batch: PartitionBatch<Rec> = {
    records: offsets.map((o) => ({ offset: String(o) })),
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

const settled: RecordResult = { kind: 'settled' };
const hold = (ms: number): RecordResult => ({ kind: 'hold', resumeInMs: ms });

describe('process-then-commit over a partition batch', () => {
  it('handles in offset order, one at a time, and commits offset + 1 of the last settled record', async () => {
    const { batch, log, committed } = fakeBatch([10, 11, 12]);
    let active = 0;
    await processPartitionBatch(batch, async (r) => {
      active += 1;
      assert.equal(active, 1, 'records of one partition never overlap');
      log.push(`handle ${r.offset}`);
      await new Promise((res) => setTimeout(res, 1));
      active -= 1;
      return settled;
    }, { commitIntervalMs: 60_000 });
    assert.deepEqual(log, ['handle 10', 'resolve 10', 'handle 11', 'resolve 11', 'handle 12', 'resolve 12', 'commit 13']);
    assert.deepEqual(committed, ['13']);
  });

  it('never commits at or past a held record: pauses, ends the batch, leaves later records for the refetch', async () => {
    const { batch, log, committed } = fakeBatch([5, 6, 7, 8]);
    await processPartitionBatch(batch, async (r) => (r.offset === '7' ? hold(250) : settled), { commitIntervalMs: 60_000 });
    assert.deepEqual(log, ['resolve 5', 'resolve 6', 'pause 250', 'commit 7']);
    assert.deepEqual(committed, ['7']);
  });

  it('commits nothing when the first record is held', async () => {
    const { batch, log } = fakeBatch([3, 4]);
    await processPartitionBatch(batch, async () => hold(10), { commitIntervalMs: 0 });
    assert.deepEqual(log, ['pause 10']);
  });

  it('commits inside a long batch once the interval has passed', async () => {
    let clock = 0;
    const { batch, committed } = fakeBatch([0, 1, 2, 3]);
    await processPartitionBatch(batch, async () => {
      clock += 600;
      return settled;
    }, { commitIntervalMs: 1000, now: () => clock });
    assert.deepEqual(committed, ['2', '4']);
  });

  it('stops taking records when told (stop, seek, drain limit) and commits what settled', async () => {
    let taken = 0;
    const { batch, log } = fakeBatch([0, 1, 2], { mayTake: () => taken < 2 });
    await processPartitionBatch(batch, async () => {
      taken += 1;
      return settled;
    }, { commitIntervalMs: 60_000 });
    assert.deepEqual(log, ['resolve 0', 'resolve 1', 'commit 2']);
  });

  it('on a rebalance seen by the heartbeat: commits the settled prefix, then rethrows so kafkajs rejoins', async () => {
    const rebalance = Object.assign(new Error('The group is rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
    let beats = 0;
    const { batch, log } = fakeBatch([0, 1, 2], {
      heartbeat: async () => {
        beats += 1;
        if (beats === 2) throw rebalance;
      },
    });
    await assert.rejects(processPartitionBatch(batch, async () => settled, { commitIntervalMs: 60_000 }), rebalance);
    assert.deepEqual(log, ['resolve 0', 'resolve 1', 'commit 2']);
  });
});
