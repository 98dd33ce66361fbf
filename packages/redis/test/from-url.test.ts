import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { transportFromUrl as coreTransportFromUrl } from '@babelqueue/core';
import { RedisConfigError, RedisTransport, redisTransportFromUrl, transportFromUrl } from '../src/index.js';
import { broker, captureLogger, closeTransports, envelopeBody, take, track, uniqueQueue, withScores } from './support/redis.js';

const b = broker('redis');

describe('redis transport from a URL', { skip: b.skip }, () => {
  afterEach(closeTransports);

  it('reads the options from the query and leaves the rest to the connection', async () => {
    const t = track(redisTransportFromUrl(`${b.url!}/0?layout=zset&retryAfter=null&prefix=app_&migrationBatchSize=50&blockTimeoutS=0.5`, { logger: captureLogger() }));
    assert.equal(t.layout, 'zset');
    assert.equal(t.rules.name, 'redis-zset');
    const q = uniqueQueue('url');
    await t.publishRaw(q, Buffer.from('{"attempts":0}'));
    const plain = track(new Redis(b.url!));
    assert.equal(await plain.llen(`app_queues:${q}`), 1, 'prefix applied');
    await take(t, q);
    assert.equal((await withScores(plain, `app_queues:${q}:reserved`))[0]![1], 'inf', 'retryAfter=null');
    await Promise.all([t.close(), plain.quit()]);
  });

  it('refuses bad option values in the URL', () => {
    assert.throws(() => redisTransportFromUrl(`${b.url!}?retryAfter=-5`), RedisConfigError);
    assert.throws(() => redisTransportFromUrl(`${b.url!}?retryAfter=soon`), /retryAfter must be a number/);
    assert.throws(() => redisTransportFromUrl(`${b.url!}?layout=streams`), /layout/);
  });

  it("is what the core's URL registry builds for redis:// (legacy by default)", async () => {
    const t = await coreTransportFromUrl(b.url!);
    assert.ok(t instanceof RedisTransport, 't instanceof RedisTransport');
    track(t);
    assert.equal(t.rules.name, 'redis-legacy');
    await t.close();
  });

  it('transportFromUrl takes the URL as a string (what the registry passes) or as a URL', async () => {
    const fromString = track(transportFromUrl(`${b.url!}?layout=zset`));
    const fromUrl = track(transportFromUrl(new URL(`${b.url!}?layout=zset`)));
    for (const t of [fromString, fromUrl]) {
      assert.ok(t instanceof RedisTransport, "t instanceof RedisTransport");
      assert.equal(t.layout, 'zset');
    }
    await Promise.all([fromString.close(), fromUrl.close()]);
  });

  it('a URL that does not parse is a RedisConfigError that does not repeat its credentials', () => {
    for (const bad of ['redis://user:s3cret-pw@127.0.0.1:notaport', 'redis://user:s3cret-pw@[::1']) {
      assert.throws(() => transportFromUrl(bad), (e: unknown) =>
        e instanceof RedisConfigError && /not a Redis URL/.test(e.message) && !e.message.includes('s3cret') && !String(e).includes('s3cret'));
    }
  });

  it('close() leaves a client passed as redis open, and is idempotent', async () => {
    const client = track(new Redis(b.url!));
    const t = track(new RedisTransport({ redis: client, logger: captureLogger() }));
    const q = uniqueQueue('own');
    await t.publish({ body: envelopeBody('urn:babel:a:b'), queue: q, projection: {} as never });
    await t.close();
    await t.close();
    assert.equal(await client.llen(q), 1);
    await assert.rejects(t.consume(q, async () => {}, { concurrency: 1, signal: new AbortController().signal }), /closed/);
    await client.quit();
  });
});
