import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as root from '@babelqueue/core';
import * as binding from '@babelqueue/core/binding';
import { decide } from '@babelqueue/core/binding';

const BROKERS = /Kafka|RabbitMQ|Redis|SQS|Pulsar|Artemis|Service Bus/;

/** The source without its comments: what runs, and what it says to a user. */
function code(path: string): string {
  return readFileSync(new URL(path, import.meta.url), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

describe('the two entries of @babelqueue/core', () => {
  it('the DLQ naming helpers have one place: <queue>.dlq at the root, SQS names in the binding entry', () => {
    assert.equal(typeof root.dlqName, 'function');
    assert.equal(root.DLQ_SUFFIX, '.dlq');
    assert.equal('dlqName' in binding, false, 'dlqName is exported from the root entry only');
    assert.equal('DLQ_SUFFIX' in binding, false, 'DLQ_SUFFIX is exported from the root entry only');
    assert.equal(typeof binding.sqsDlqName, 'function');
  });

  it('the start-up checks name no broker: a binding says its own advice (rules.retryPathAdvice, rules.delayAdvice)', () => {
    assert.doesNotMatch(code('../../src/runtime/startup-checks.ts'), BROKERS);
  });

  it('the settlement policy names no broker in what it says', () => {
    assert.doesNotMatch(code('../../src/settlement/policy.ts'), BROKERS);
    const verdict = decide({
      outcome: { kind: 'failed', error: new Error('boom') },
      counted: 1,
      config: {
        maxAttempts: 3,
        onUnknownUrn: 'fail',
        deadLetterQueue: undefined,
        defaultDeadLetterQueue: 'orders.dlq',
        retryBackoff: { baseMs: 0, multiplier: 1, maxMs: 0 },
        unknownUrnReleaseDelayMs: 0,
      },
      rules: { name: 'no-retry-path', poisonWithoutDeadLetter: 'drop', deleteStrategyDropsPoison: true, versionGateWithoutDeadLetter: 'none', attempts: { kind: 'body' } },
      capabilities: { delayedPublish: false, delayedRetry: false, retry: false },
    });
    assert.equal(verdict.kind, 'unsettled');
    assert.doesNotMatch('why' in verdict ? String(verdict.why) : '', BROKERS);
  });
});
