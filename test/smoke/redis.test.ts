// Smoke: the lab's Redis takes and gives back one message through ioredis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { broker, uniqueQueue } from '../support/brokers.js';

const b = broker('redis');

describe('smoke: redis', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(b.url!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  });
  after(async () => {
    await redis.quit();
  });

  it('RPUSH then LPOP returns the same bytes', async () => {
    const key = uniqueQueue('smoke-redis');
    const body = Buffer.from('{"job":"urn:babel:smoke:ping","data":{"n":1,"s":"é"}}');
    await redis.rpush(key, body);
    assert.deepEqual(await redis.lpopBuffer(key), body);
    assert.equal(await redis.exists(key), 0);
  });
});
