import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type Outcome, type PolicyConfig } from '@babelqueue/core';
import { decide, type BindingRules } from '@babelqueue/core/binding';
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
interface Table {
  defaults: Record<string, unknown> & { queue: string };
  bindings: Record<string, BindingPreset>;
  rows: Row[];
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
