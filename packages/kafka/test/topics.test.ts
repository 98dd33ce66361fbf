import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryTopicConfig } from '../src/index.js';

describe('retry topic config', () => {
  it('uses LogAppendTime and a retention longer than the largest tier', () => {
    const config = Object.fromEntries(retryTopicConfig([500, 1000]).map((c) => [c.name, c.value]));
    assert.equal(config['message.timestamp.type'], 'LogAppendTime');
    assert.ok(Number(config['retention.ms']) > 1000, "Number(config['retention.ms']) > 1000");
    const huge = Object.fromEntries(retryTopicConfig([30 * 24 * 3600_000]).map((c) => [c.name, c.value]));
    assert.ok(Number(huge['retention.ms']) > 30 * 24 * 3600_000, "Number(huge['retention.ms']) > 30 * 24 * 3600_000");
  });
});
