import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reinjectDueAt } from '../src/index.js';
import { originalTopicOf } from '../src/reinject-schedule.js';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('re-inject schedule', () => {
  const now = 1_000_000;
  // clamp(record.timestamp + tier_ms, now, now + tier_ms)
  const rows: [string, number, number, number][] = [
    ['not yet due: timestamp + tier', now - 200, 500, now + 300],
    ['overdue: now', now - 5000, 500, now],
    ['exactly due: now', now - 500, 500, now],
    ['future timestamp (skew): at most now + tier', now + 60_000, 500, now + 500],
    ['unreadable timestamp: now', Number.NaN, 500, now],
  ];
  for (const [name, ts, tier, expected] of rows) {
    it(name, () => assert.equal(reinjectDueAt(ts, tier, now), expected));
  }

  it('returns to bq-original-topic, else the work topic', () => {
    assert.equal(originalTopicOf({ 'bq-original-topic': b('orders') }, 'fallback'), 'orders');
    assert.equal(originalTopicOf({ 'bq-original-topic': b(' ') }, 'fallback'), 'fallback');
    assert.equal(originalTopicOf({}, 'fallback'), 'fallback');
  });
});
