// Smoke: the lab's three-master Redis Cluster routes by slot, so keys sharing a
// hash tag move together and keys without one refuse a multi-key command.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from 'ioredis';
import { broker, uniqueQueue } from '../support/brokers.js';

const b = broker('redis-cluster');

describe('smoke: redis cluster', { skip: b.skip }, () => {
  let cluster: Cluster;
  before(async () => {
    const url = new URL(b.url!);
    // ioredis' default 1 s for CLUSTER SLOTS is too short on a busy host (the client then
    // finds no startup node); a refresh failing meanwhile is retried, so its event is not news.
    cluster = new Cluster([{ host: url.hostname, port: Number(url.port) }], { lazyConnect: true, slotsRefreshTimeout: 10_000 });
    cluster.on('error', () => undefined);
    await cluster.connect();
  });
  after(async () => {
    await cluster.quit();
  });

  it('has three masters covering all 16384 slots', async () => {
    assert.equal(cluster.nodes('master').length, 3);
    const info = String(await cluster.cluster('INFO'));
    assert.match(info, /cluster_state:ok/);
    assert.match(info, /cluster_slots_assigned:16384/);
  });

  it('moves a message between two hash-tagged lists atomically (LMOVE)', async () => {
    const q = uniqueQueue('smoke-cluster');
    const body = Buffer.from('{"job":"urn:babel:smoke:ping"}');
    await cluster.rpush(`{${q}}`, body);
    await cluster.lmove(`{${q}}`, `{${q}}:processing`, 'LEFT', 'RIGHT');
    assert.deepEqual(await cluster.lrangeBuffer(`{${q}}:processing`, 0, -1), [body]);
    await cluster.del(`{${q}}:processing`);
  });

  it('refuses a multi-key command across slots with CROSSSLOT', async () => {
    const q = uniqueQueue('smoke-cluster');
    const k1 = `${q}:a`;
    const k2 = [`${q}:b`, `${q}:c`, `${q}:d`].find((k) => slotOf(k) !== slotOf(k1))!;
    await cluster.rpush(k1, 'x');
    await assert.rejects(cluster.lmove(k1, k2, 'LEFT', 'RIGHT'), /CROSSSLOT/);
    assert.equal(await cluster.llen(k1), 1, 'nothing moved');
    await cluster.del(k1);
  });
});

/** Redis Cluster's key slot: CRC16 (XMODEM) of the key, or of its hash tag. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
