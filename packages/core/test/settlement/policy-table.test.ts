import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type Outcome, type PolicyConfig } from '@babelqueue/core';
import { decide, reconcileAttempts, type BindingRules, type NativeCount } from '@babelqueue/core/binding';
import { ownConformance } from '../support/paths.js';

interface BindingPreset {
  rules: Omit<BindingRules, 'name'>;
  capabilities: { retry: boolean; delayedRetry: boolean; delayedPublish: boolean };
  dlq: string;
}
interface Row {
  rule: string;
  bindings: string[];
  outcome: Outcome;
  counted: number;
  config: Record<string, unknown>;
  expect: Record<string, unknown>;
}
interface AttemptsRow {
  rule: string;
  bindings: string[];
  body: number;
  native: NativeCount;
  expect: number;
}
interface Table {
  defaults: Record<string, unknown> & { queue: string };
  bindings: Record<string, BindingPreset>;
  rows: Row[];
  attempts: AttemptsRow[];
}

const table = JSON.parse(readFileSync(join(ownConformance, 'settlement.json'), 'utf8')) as Table;

function policyConfig(row: Row, preset: BindingPreset): PolicyConfig {
  const c = { ...table.defaults, ...row.config } as Record<string, unknown>;
  const queue = table.defaults.queue;
  const dl = c.deadLetter as boolean | { queue?: string; suffix?: string };
  const named = (suffix?: string) => `${queue}${suffix ?? preset.dlq}`;
  const backoff = c.retryBackoff as { baseMs: number; multiplier: number; maxMs: number | null };
  return {
    maxAttempts: c.maxAttempts as number,
    onUnknownUrn: c.onUnknownUrn as PolicyConfig['onUnknownUrn'],
    deadLetterQueue: dl === false ? undefined : dl === true ? named() : (dl.queue ?? named(dl.suffix)),
    defaultDeadLetterQueue: named(),
    retryBackoff: { ...backoff, maxMs: backoff.maxMs ?? Infinity },
    unknownUrnReleaseDelayMs: c.unknownUrnReleaseDelayMs as number,
  };
}

describe('settlement policy: one row per spec rule (conformance/settlement.json)', () => {
  for (const row of table.rows) {
    for (const binding of row.bindings) {
      const preset = table.bindings[binding];
      test(`[${binding}] ${row.rule}`, () => {
        assert.ok(preset, `unknown binding ${binding}`);
        const verdict = decide({
          outcome: row.outcome,
          counted: row.counted,
          config: policyConfig(row, preset),
          rules: { name: binding, ...preset.rules },
          capabilities: preset.capabilities,
        });
        // Compare the fields the row states (a drop's wording is free).
        const actual = Object.fromEntries(Object.keys(row.expect).map((k) => [k, (verdict as Record<string, unknown>)[k]]));
        assert.deepEqual(actual, row.expect);
      });
    }
  }
});

describe('attempts reconciliation: each binding\'s formula (BindingRules.attempts, conformance/settlement.json)', () => {
  for (const row of table.attempts) {
    for (const binding of row.bindings) {
      test(`[${binding}] ${row.rule}`, () => {
        const preset = table.bindings[binding];
        assert.ok(preset, `unknown binding ${binding}`);
        assert.equal(reconcileAttempts(preset.rules.attempts, row.body, row.native), row.expect);
      });
    }
  }

  test('every binding of the table is run by at least one row', () => {
    const covered = new Set(table.attempts.flatMap((row) => row.bindings));
    assert.deepEqual(Object.keys(table.bindings).filter((b) => !covered.has(b)), []);
  });
});

describe('delay advice (BindingRules.delayAdvice)', () => {
  for (const [binding, preset] of Object.entries(table.bindings)) {
    test(`[${binding}] advises exactly when it cannot delay a retry`, () => {
      assert.equal(typeof preset.rules.delayAdvice === 'string' && preset.rules.delayAdvice.length > 0, !preset.capabilities.delayedRetry);
    });
  }
});
