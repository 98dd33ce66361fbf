// The legacy layout's early wake-up: Redis client-side tracking tells an idle
// consumer that its ready list was written, by any client, so its sleep-poll
// ends at once instead of after up to a second.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { queryObjects } from 'node:v8';
import { Cluster, Redis } from 'ioredis';
import { silentLogger } from '@babelqueue/core';
import { KeyWatch } from '../src/consume/key-watch.js';
import { broker, inspector, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const cluster = broker('redis-cluster');

describe('redis legacy wake-up (client-side tracking)', { skip: b.skip }, () => {
  let redis: Redis;
  let client: Redis;
  before(() => {
    redis = inspector(b.url!);
    client = new Redis(b.url!);
  });
  after(async () => {
    await redis.quit();
    await client.quit();
  });

  it('a write by another client that knows nothing of it ends the wait ("written"), not its timeout', async () => {
    const watch = new KeyWatch(client, silentLogger, {});
    try {
      // The first wait opens the connections; later ones only arm (one LLEN).
      assert.equal(await watch.wait(uniqueQueue('kw-start'), 50, new AbortController().signal), 'timeout');
      // A write that lands before the arming read is seen by it ("not-empty"): try a fresh list then.
      let reason = 'not-empty';
      for (let tries = 0; reason === 'not-empty' && tries < 5; tries++) {
        const q = uniqueQueue('kw-write');
        const waiting = watch.wait(q, 30_000, new AbortController().signal);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await redis.rpush(q, 'x');
        reason = await waiting;
      }
      assert.equal(reason, 'written');
    } finally {
      watch.close();
    }
  });

  it('a list that already holds something answers at once ("not-empty"); an untouched one times out; an abort ends it', async () => {
    const q = uniqueQueue('kw-states');
    const watch = new KeyWatch(client, silentLogger, { queue: q });
    try {
      assert.equal(await watch.wait(q, 200, new AbortController().signal), 'timeout');
      const stop = new AbortController();
      const waiting = watch.wait(q, 60_000, stop.signal);
      stop.abort();
      assert.equal(await waiting, 'aborted');
      await redis.rpush(q, 'x');
      assert.equal(await watch.wait(q, 60_000, new AbortController().signal), 'not-empty');
    } finally {
      watch.close();
    }
  });

  it('a wait that times out leaves nothing registered: an idle worker waits once a second for hours', async () => {
    const q = uniqueQueue('kw-idle');
    const watch = new KeyWatch(client, silentLogger, { queue: q });
    try {
      assert.equal(await watch.wait(q, 5, new AbortController().signal), 'timeout');
      // Promises alive on the heap, counted after a GC (queryObjects runs one).
      const promises = () => queryObjects(Promise, { format: 'count' }) as number;
      const before = promises();
      for (let i = 0; i < 200; i++) assert.equal(await watch.wait(q, 5, new AbortController().signal), 'timeout');
      const grown = promises() - before;
      assert.ok(grown < 50, `${grown} more promises alive after 200 waits`);
      // And a write still ends the next one.
      const waiting = watch.wait(q, 30_000, new AbortController().signal);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await redis.rpush(q, 'x');
      const why = await waiting;
      assert.ok(why === 'written' || why === 'not-empty', why);
    } finally {
      watch.close();
    }
  });

  it('a write to another key does not end the wait', async () => {
    const q = uniqueQueue('kw-other');
    const watch = new KeyWatch(client, silentLogger, { queue: q });
    try {
      const waiting = watch.wait(q, 1500, new AbortController().signal);
      await redis.rpush(`${q}:processing`, 'x');
      assert.equal(await waiting, 'timeout');
    } finally {
      watch.close();
    }
  });

  it('on Redis Cluster there is no wake-up: the wait is the plain sleep', { skip: cluster.skip }, async () => {
    const url = new URL(cluster.url!);
    const clustered = new Cluster([{ host: url.hostname, port: Number(url.port) }]);
    const watch = new KeyWatch(clustered, silentLogger, { queue: 'q' });
    try {
      assert.equal(await watch.wait(uniqueQueue('kw-cluster'), 100, new AbortController().signal), 'timeout');
    } finally {
      watch.close();
      clustered.disconnect();
    }
  });
});
