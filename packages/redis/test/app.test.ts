import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, CapabilityError, redrive, type AppOptions } from '@babelqueue/core';
import type { Redis } from 'ioredis';
import { RedisTransport, unframe, type RedisLayout } from '../src/index.js';
import { broker, captureLogger, envelopeBody, inspector, now, uniqueQueue, withScores } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
/** Bounds a drain that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

interface DeadLetterRecord {
  raw?: string;
  raw_encoding?: string;
  job?: string;
  attempts?: number;
  dead_letter: { reason: string; original_queue: string; attempts: number; error: string | null; lang: string };
}

/** Key helpers per layout: where a queue's ready list and a DLQ live. */
const at = (layout: RedisLayout) => ({
  ready: (q: string) => (layout === 'zset' ? `queues:${q}` : q),
  reserved: (q: string) => (layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`),
  /** Where a retry waits: the zset layout's :delayed (the legacy layout has none: its ready list). */
  delayed: (q: string) => (layout === 'zset' ? `queues:${q}:delayed` : q),
  dlq: (q: string) => (layout === 'zset' ? `queues:${q}` : q),
});

function app(url: string, layout: RedisLayout, queue: string, options: Partial<AppOptions> = {}, retryAfter?: number) {
  const logger = captureLogger();
  const transport = new RedisTransport({ url, layout, logger, ...(retryAfter !== undefined ? { retryAfter } : {}) });
  const a = createApp({ transport, queue, logger, ...options });
  return { app: a, logger, transport };
}

/** Runs `body`, then closes the App whatever happened (an open client would keep the file alive). */
async function closing<T extends { close(): Promise<void> }>(a: T, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    await a.close();
  }
}

describe('redis legacy layout: riders through the DLQ and back', { skip: b.skip }, () => {
  it('a failed framed message keeps its riders on the dead-letter record, and a redrive carries them back to work', async () => {
    const q = uniqueQueue('app-riders-redrive');
    const riders = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' };
    const { app: a, transport } = app(b.url!, 'legacy', q, { maxAttempts: 1, deadLetter: true });
    const redis = inspector(b.url!);
    try {
      a.handle(URN, () => {
        throw new Error('gateway timeout');
      });
      await a.publish(URN, { order_id: 1 }, { headers: riders });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      const [stored] = await redis.lrangeBuffer(`${q}.dlq`, 0, -1);
      assert.deepEqual(unframe(stored!).headers, riders, 'the riders ride the record');
      const result = await redrive(transport, { from: `${q}.dlq`, max: 1, idleMs: IDLE_MS });
      assert.equal(result.redriven, 1);
      const [back] = await redis.lrangeBuffer(q, 0, -1);
      const again = unframe(back!);
      assert.deepEqual(again.headers, riders, 'the redriven copy is framed with them again');
      const envelope = JSON.parse(again.body.toString()) as { attempts: number; dead_letter?: unknown };
      assert.deepEqual([envelope.attempts, envelope.dead_letter], [0, undefined], 'the reset body inside');
    } finally {
      await a.close();
      await redis.del(q, `${q}.dlq`);
      await redis.quit();
    }
  });
});

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout} layout through createApp`, { skip: b.skip }, () => {
    let redis: Redis;
    const keys = at(layout);
    before(() => {
      redis = inspector(b.url!);
    });
    after(async () => {
      await redis.quit();
    });

    const frame = (inner: string) => `{"__bq_frame":1,"headers":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"body":${JSON.stringify(inner)}}`;
    const poisons: [string, Buffer, (r: DeadLetterRecord, raw: Buffer) => void][] = [
      ['not JSON', Buffer.from('this is not json'), (r) => assert.equal(r.raw, 'this is not json')],
      ['a JSON array', Buffer.from('[1,2]'), (r) => assert.equal(r.raw, '[1,2]')],
      ['a JSON scalar', Buffer.from('7'), (r) => assert.equal(r.raw, '7')],
      ['an object with attempts but no job or urn', Buffer.from('{"data":{},"attempts":0}'), (r) => {
        assert.equal(r.attempts, 0, 'an object keeps its members');
        assert.equal(r.raw, undefined);
      }],
      ['an object whose job is blank', Buffer.from('{"job":"  ","attempts":1}'), (r) => assert.equal(r.job, '  ')],
      ['an object without attempts', Buffer.from('{"job":"urn:babel:x:y"}'), (r) => assert.equal(r.job, 'urn:babel:x:y')],
      ['invalid UTF-8', Buffer.concat([Buffer.from('{"job":"urn:babel:x:y","data":{"s":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"},"attempts":0}')]), (r, raw) => {
        assert.equal(r.raw_encoding, 'base64');
        assert.equal(r.raw, raw.toString('base64'));
      }],
      ...(layout === 'legacy'
        ? ([
            ['a frame around a body that is not JSON', Buffer.from(frame('nope')), (r: DeadLetterRecord) => assert.equal(r.raw, 'nope', 'the record holds the inner body')],
            ['a frame around an identity-less object', Buffer.from(frame('{"attempts":0}')), (r: DeadLetterRecord) => assert.equal(r.attempts, 0)],
          ] as [string, Buffer, (r: DeadLetterRecord, raw: Buffer) => void][])
        : []),
    ];
    const configs: [string, Partial<AppOptions>, (q: string) => string][] = [
      ['dead-lettering off', {}, (q) => `${q}.dlq`],
      ['dead-lettering off and on_unknown_urn delete', { onUnknownUrn: 'delete' }, (q) => `${q}.dlq`],
      ['an explicit DLQ and on_unknown_urn delete', { onUnknownUrn: 'delete', deadLetter: { queue: 'CUSTOM' } }, (q) => `${q}-custom`],
      ['dead-lettering on and on_unknown_urn dead_letter', { onUnknownUrn: 'dead_letter', deadLetter: true }, (q) => `${q}.dlq`],
    ];

    for (const [kind, raw, check] of poisons) {
      it(`poison (${kind}) is dead-lettered as a poison record in every configuration, never handled or retried`, async () => {
        for (const [, options, dlqOf] of configs) {
          const q = uniqueQueue(`${layout}-poison`);
          const dlq = dlqOf(q);
          const resolved = options.deadLetter && typeof options.deadLetter === 'object' ? { ...options, deadLetter: { queue: dlq } } : options;
          const { app: a } = app(b.url!, layout, q, resolved);
          await closing(a, async () => {
            let handled = 0;
            a.handle(URN, () => void handled++).handle('urn:babel:x:y', () => void handled++);
            await redis.rpush(keys.ready(q), raw);
            assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
            assert.equal(handled, 0);
            const records = await redis.lrangeBuffer(keys.dlq(dlq), 0, -1);
            assert.equal(records.length, 1, `one record in ${dlq}`);
            // A frame's riders ride its record, framed again; a bare body gives a bare record.
            const stored = unframe(records[0]!);
            assert.deepEqual(stored.headers, layout === 'legacy' ? unframe(raw).headers : {}, 'the riders ride the record');
            const record = JSON.parse(stored.body.toString()) as DeadLetterRecord;
            assert.equal(record.dead_letter.reason, 'poison');
            assert.equal(record.dead_letter.original_queue, q);
            assert.equal(record.dead_letter.attempts, 1);
            check(record, raw);
            assert.equal(await redis.exists(keys.ready(q), keys.reserved(q), keys.delayed(q)), 0, 'nothing left reserved, queued or delayed');
          });
        }
      });
    }

    it('a DLQ write that fails leaves the poison reserved; recovery brings it back and the write is tried again', async () => {
      const q = uniqueQueue(`${layout}-dlqfail`);
      const { app: a, logger } = app(b.url!, layout, q, {}, 600);
      await closing(a, async () => {
        await redis.set(keys.dlq(`${q}.dlq`), 'wrong type');
        await redis.rpush(keys.ready(q), 'poison body');
        assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        assert.ok(logger.lines.some((l) => l.level === 'error' && l.message.startsWith('dead-letter write failed')), 'the failed write is logged');
        assert.equal(await redis.zcard(keys.reserved(q)), 1, 'still reserved');
        await redis.del(keys.dlq(`${q}.dlq`));
        // The reservation's deadline passes: the clock moved through its score, no waiting for retry_after.
        const [[member]] = (await withScores(redis, keys.reserved(q))) as [[Buffer, string]];
        await redis.zadd(keys.reserved(q), 'XX', now() - 1, member);
        assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const records = await redis.lrange(keys.dlq(`${q}.dlq`), 0, -1);
        assert.equal(records.length, 1);
        assert.equal((JSON.parse(records[0]!) as DeadLetterRecord).raw, 'poison body');
        assert.equal(await redis.exists(keys.ready(q), keys.reserved(q)), 0);
      });
    });

    it('a handler that keeps failing is retried up to maxAttempts, then dead-lettered with the counted attempt', async () => {
      const q = uniqueQueue(`${layout}-exhaust`);
      const { app: a } = app(b.url!, layout, q, { maxAttempts: 3, deadLetter: true });
      await closing(a, async () => {
        const seen: number[] = [];
        a.handle(URN, (_d, m) => {
          seen.push(m.attempts);
          throw new TypeError('gateway timeout');
        });
        await a.publish(URN, { order_id: 1 });
        await a.consume({ maxMessages: 3, idleMs: IDLE_MS });
        assert.deepEqual(seen, [1, 2, 3]);
        const [rec] = await redis.lrange(keys.dlq(`${q}.dlq`), 0, -1);
        const record = JSON.parse(rec!) as DeadLetterRecord;
        assert.equal(record.dead_letter.reason, 'failed');
        assert.equal(record.dead_letter.attempts, 3);
        assert.equal(record.dead_letter.error, 'gateway timeout');
        assert.equal(record.job, URN);
        assert.equal(await redis.exists(keys.ready(q), keys.reserved(q), keys.delayed(q)), 0, 'no fourth delivery waiting');
      });
    });

    it('dead-lettering off: an exhausted message is dropped, not written anywhere', async () => {
      const q = uniqueQueue(`${layout}-drop`);
      const { app: a } = app(b.url!, layout, q, { maxAttempts: 2 });
      await closing(a, async () => {
        let calls = 0;
        a.handle(URN, () => {
          calls++;
          throw new Error('no');
        });
        await a.publish(URN, {});
        await a.consume({ maxMessages: 2, idleMs: IDLE_MS });
        assert.equal(calls, 2);
        assert.equal(await redis.exists(keys.ready(q), keys.reserved(q), keys.delayed(q), keys.dlq(`${q}.dlq`)), 0, 'dropped: nothing left anywhere');
      });
    });

    const strategies: [string, Partial<AppOptions>, number, string | null][] = [
      ['fail (default): retried to maxAttempts, then dropped without a DLQ', { maxAttempts: 2 }, 2, null],
      ['fail with a DLQ: retried, then dead-lettered as unknown_urn', { maxAttempts: 2, deadLetter: true }, 2, 'unknown_urn'],
      ['delete: acked and dropped', { onUnknownUrn: 'delete', deadLetter: true }, 1, null],
      ['dead_letter: quarantined at once', { onUnknownUrn: 'dead_letter', deadLetter: true }, 1, 'unknown_urn'],
      ['dead_letter without a DLQ degrades to delete', { onUnknownUrn: 'dead_letter' }, 1, null],
      ['release: put back until maxAttempts', { onUnknownUrn: 'release', maxAttempts: 3 }, 3, null],
    ];
    for (const [what, options, deliveries, reason] of strategies) {
      it(`unknown URN, ${what}`, async () => {
        const q = uniqueQueue(`${layout}-unknown`);
        const { app: a, transport } = app(b.url!, layout, q, options);
        await closing(a, async () => {
          let delivered = 0;
          const consume = transport.consume.bind(transport);
          transport.consume = (queue, onDelivery, opts) =>
            consume(queue, async (d) => {
              delivered++;
              await onDelivery(d);
            }, opts);
          await a.publish('urn:babel:nobody:handles', {});
          await a.consume({ maxMessages: deliveries, idleMs: IDLE_MS });
          assert.equal(delivered, deliveries);
          const records = await redis.lrange(keys.dlq(`${q}.dlq`), 0, -1);
          if (reason === null) assert.equal(records.length, 0);
          else assert.equal((JSON.parse(records[0]!) as DeadLetterRecord).dead_letter.reason, reason);
          assert.equal(await redis.exists(keys.ready(q), keys.reserved(q), keys.delayed(q)), 0, 'settled: no further delivery waiting');
        });
      });
    }
  });
}

describe('redis layouts: what differs through createApp', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });

  it('zset: the handler sees job.attempts + 1, as Laravel counts', async () => {
    const q = uniqueQueue('zset-attempts');
    const { app: a } = app(b.url!, 'zset', q, { maxAttempts: 5, deadLetter: true });
    await closing(a, async () => {
      const seen: number[] = [];
      a.handle(URN, (_d, m) => {
        seen.push(m.attempts);
        throw new Error('x');
      });
      await redis.rpush(`queues:${q}`, envelopeBody(URN, {}, 3, q));
      await a.consume({ maxMessages: 2, idleMs: IDLE_MS });
      assert.deepEqual(seen, [4, 5]);
      const [rec] = await redis.lrange(`queues:${q}.dlq`, 0, -1);
      assert.equal((JSON.parse(rec!) as DeadLetterRecord).dead_letter.attempts, 5);
      assert.equal(await redis.exists(`queues:${q}`, `queues:${q}:delayed`, `queues:${q}:reserved`), 0);
    });
  });

  it('zset: a retry waits its backoff in :delayed; the body keeps its bytes with attempts set', async () => {
    const q = uniqueQueue('zset-backoff');
    const { app: a } = app(b.url!, 'zset', q, { retryBackoff: { baseMs: 2000 }, maxAttempts: 2 });
    await closing(a, async () => {
      let calls = 0;
      a.handle(URN, () => {
        calls++;
        if (calls === 1) throw new Error('later');
      });
      await a.publish(URN, { big: 1 });
      const before = now();
      await a.consume({ idleMs: IDLE_MS, maxMessages: 1 });
      const after = now();
      const delayed = await withScores(redis, `queues:${q}:delayed`);
      assert.equal(delayed.length, 1);
      const [member, score] = delayed[0]!;
      assert.equal((JSON.parse(member.toString()) as { attempts: number }).attempts, 1);
      assert.ok(Number(score) >= before + 2 && Number(score) <= after + 2, `due at floor(now) + 2, got ${score}`);
      // Due: the clock moved through the score, no waiting for the backoff.
      await redis.zadd(`queues:${q}:delayed`, 'XX', now() - 1, member);
      await a.consume({ idleMs: IDLE_MS, maxMessages: 1 });
      assert.equal(calls, 2);
    });
  });

  it('zset: a delayed publish goes through createApp', async () => {
    const q = uniqueQueue('zset-app-delay');
    const { app: a } = app(b.url!, 'zset', q);
    await closing(a, async () => {
      await a.publish(URN, {}, { delayMs: 1000 });
      assert.equal(await redis.zcard(`queues:${q}:delayed`), 1);
    });
  });

  it('legacy: a delayed publish is refused by the App; a retry backoff is ignored (straight back)', async () => {
    const q = uniqueQueue('legacy-nodelay');
    const { app: a } = app(b.url!, 'legacy', q, { retryBackoff: { baseMs: 60_000 }, maxAttempts: 2 });
    await closing(a, async () => {
      await assert.rejects(a.publish(URN, {}, { delayMs: 1000 }), CapabilityError);
      const seen: number[] = [];
      a.handle(URN, (_d, m) => {
        seen.push(m.attempts);
        if (m.attempts === 1) throw new Error('once');
      });
      await a.publish(URN, {});
      await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
      assert.equal(await redis.llen(q), 1, 'the retry copy is straight back on the ready list, whatever the 60 s backoff says');
      await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
      assert.deepEqual(seen, [1, 2]);
    });
  });

  it('legacy: publish headers ride a __bq_frame and reach the handler', async () => {
    const q = uniqueQueue('legacy-headers');
    const { app: a } = app(b.url!, 'legacy', q);
    await closing(a, async () => {
      const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      let headers: unknown;
      a.handle(URN, (_d, m) => {
        headers = m.headers;
      });
      await a.publish(URN, {}, { headers: { traceparent: tp } });
      await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
      assert.deepEqual(headers, { traceparent: tp });
    });
  });
});
